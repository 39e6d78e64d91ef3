import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PasswordGate } from '../src/crypto/password-gate.ts';
import { type Derive, Passwords } from '../src/crypto/passwords.ts';
import { makeToken, req, startServer, tempDataDir, type Res } from './helpers/server.ts';
import { until } from './helpers/until.ts';

/**
 * Password checks never take every thread of libuv's pool, which the store's file I/O needs
 * (README, Security and durability). The stand-in for scrypt holds a pool thread the way a
 * huge cost would: opening a FIFO blocks that thread until a writer opens it.
 */
describe('password checks and the thread pool', () => {
  test('while checks hold their slots, creates and uncached reads still answer; past the queue a check gets 503 with Retry-After', async () => {
    const dataDir = await tempDataDir();
    const fifo = join(dataDir, 'held');
    execFileSync('mkfifo', [fifo]);
    let holding = false;
    const derive: Derive = async (password, salt) => {
      if (holding) await (await open(fifo, 'r')).close();
      return createHash('sha256').update(salt).update(password).digest();
    };
    // The default's concurrency (half of libuv's four threads), with a short queue.
    const gate = new PasswordGate({ concurrency: 2, queue: 2, retryAfterSec: 1 });
    const a = await startServer({
      dataDir,
      env: { PASTE_CACHE_MB: '0' },
      passwords: new Passwords({ gate, derive }),
    });
    const owner = await makeToken(dataDir, { user: 'alice' });
    const reader = await makeToken(dataDir, { user: 'bob', scopes: 'read' });
    const create = (body: Record<string, unknown>): Promise<Res> =>
      req(a, 'POST', '/api/v1/paste_create.php', { token: owner, body });
    const plain = (await create({ content: 'no password' })).json?.['hash'] as string;
    const locked: string[] = [];
    for (let i = 0; i < 5; i++)
      locked.push((await create({ content: `locked ${i}`, password: 'pw' })).json?.['hash'] as string);

    holding = true;
    const guess = (hash: string): Promise<Res> =>
      req(a, 'GET', `/api/v1/paste.php?hash=${hash}&password=wrong`, { token: reader });
    const held = locked.slice(0, 4).map(guess);
    await until(() => gate.load.active >= 2 && gate.load.waiting >= 2, { what: 'two checks running and two waiting' });

    const busy = await guess(locked[4] as string);
    assert.equal(busy.status, 503, busy.text);
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal((await create({ content: 'with a password', password: 'x' })).status, 503);

    const started = Date.now();
    const created = await create({ content: 'made while checks run' });
    assert.equal(created.status, 200, created.text);
    const read = await req(a, 'GET', `/api/v1/raw.php?hash=${plain}`, { token: reader });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.text, 'no password');
    assert.ok(Date.now() - started < 5_000);

    // Let the held checks go: each writer's open releases the readers blocked on the FIFO.
    holding = false;
    await until(
      () => {
        try {
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // ENXIO: no check is blocked in open() yet.
        }
        return gate.load.active === 0;
      },
      { what: 'every held check to finish', everyMs: 5 },
    );
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.status),
      [403, 403, 403, 403],
    );
  });
});
