import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SHORT_LINK_MISSES_PER_MINUTE } from '../../src/paste/service.ts';
import { BACKEND } from '../helpers/backend.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { WebClient } from '../helpers/web-client.ts';

describe('short links that lead nowhere', () => {
  test('spend the client’s budget: then every short link from it is 429 for a while, other clients and the paste pages unaffected', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1' } });
    const token = await makeToken(server.dataDir);
    const create = async (privacy: string): Promise<string> =>
      String(
        (
          await req(server, 'POST', '/api/v1/paste_create.php', {
            token,
            body: { content: `an ${privacy} paste`, privacy },
          })
        ).json['hash'],
      );
    const unlisted = await create('unlisted');
    const hidden = await create('private');
    const codeOf = (hash: string): string => hash.slice(0, 6);
    const guesser = new WebClient(server);
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const guess = (i: number): string => `Zz${String(i).padStart(4, '0')}`;

    // Links that work cost nothing, however many.
    for (let i = 0; i < SHORT_LINK_MISSES_PER_MINUTE + 5; i++)
      assert.equal((await guesser.get(`/s/${codeOf(unlisted)}`, from('198.51.100.7'))).status, 302);

    // A private paste's link counts as a miss for whoever may not see it, as a missing one does.
    assert.equal((await guesser.get(`/s/${codeOf(hidden)}`, from('198.51.100.7'))).status, 404);
    for (let i = 1; i < SHORT_LINK_MISSES_PER_MINUTE; i++)
      assert.equal((await guesser.get(`/s/${guess(i)}`, from('198.51.100.7'))).status, 404, `miss ${i}`);

    const refused = await guesser.get(`/s/${guess(0)}`, from('198.51.100.7'));
    assert.equal(refused.status, 429);
    assert.match(refused.text, /Too many short links from this address led nowhere/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // Now even a right code is refused, so the answers tell the guesser nothing.
    assert.equal((await guesser.get(`/s/${codeOf(unlisted)}`, from('198.51.100.7'))).status, 429);

    // Another client, and the guesser's own paste pages, are not held back.
    assert.equal((await guesser.get(`/s/${codeOf(unlisted)}`, from('203.0.113.9'))).status, 302);
    assert.equal((await guesser.get(`/p/${unlisted}`, from('198.51.100.7'))).status, 200);

    // The budget refills with time: two seconds buy one more try at 30 a minute.
    server.clock.advance(60_000 / SHORT_LINK_MISSES_PER_MINUTE + 10);
    assert.equal((await guesser.get(`/s/${codeOf(unlisted)}`, from('198.51.100.7'))).status, 302);
  });

  test('many links opened at once from one address are never refused; a burst of misses is paid back before the next try', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1' } });
    const token = await makeToken(server.dataDir);
    const n = SHORT_LINK_MISSES_PER_MINUTE * 2;
    // Pastes just created are not in the cache: every lookup below waits for the disk.
    const hashes = await Promise.all(
      Array.from({ length: n }, async (_, i) =>
        String(
          (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: `paste ${i}` } })).json[
            'hash'
          ],
        ),
      ),
    );
    const office = { 'x-forwarded-for': '192.0.2.10' };
    const opened = await Promise.all(hashes.map((h) => new WebClient(server).get(`/s/${h.slice(0, 6)}`, office)));
    assert.deepEqual(
      opened.map((r) => r.status),
      hashes.map(() => 302),
    );

    const guesser = { 'x-forwarded-for': '192.0.2.66' };
    const burst = await Promise.all(
      Array.from({ length: n }, (_, i) => new WebClient(server).get(`/s/Yy${String(i).padStart(4, '0')}`, guesser)),
    );
    const misses = burst.filter((r) => r.status === 404).length;
    assert.deepEqual(
      burst.filter((r) => r.status !== 404 && r.status !== 429),
      [],
    );
    // The budget is looked at before each lookup and charged after it. On the data folder the
    // lookups of a burst all wait while every look is taken, so each of them goes through; on
    // PostgreSQL a late request may see the charges of early ones, and is refused.
    if (BACKEND === 'files') assert.equal(misses, n, 'each was looked at before any was charged');
    assert.ok(misses >= SHORT_LINK_MISSES_PER_MINUTE, `${misses} misses answered`);
    // Every miss answered is paid for: 30 - misses tokens left, then 2 s a token at 30 a minute
    // (60 misses: 31 tokens, 62 s) before the next try.
    const wait = (misses - SHORT_LINK_MISSES_PER_MINUTE + 1) * (60 / SHORT_LINK_MISSES_PER_MINUTE);
    const refused = await new WebClient(server).get(`/s/${(hashes[0] ?? '').slice(0, 6)}`, guesser);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], String(wait));
    server.clock.advance(wait * 1000 - 2_000);
    assert.equal((await new WebClient(server).get(`/s/${(hashes[0] ?? '').slice(0, 6)}`, guesser)).status, 429);
    server.clock.advance(2_100);
    assert.equal((await new WebClient(server).get(`/s/${(hashes[0] ?? '').slice(0, 6)}`, guesser)).status, 302);
  });
});
