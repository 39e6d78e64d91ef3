import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { sendFiles } from '../../helpers/multipart.ts';
import { type AppServer, makeToken, req, type Res } from '../../helpers/server.ts';
import { startServer } from '../../helpers/server.ts';

/**
 * USER_QUOTA_BYTES holds when one user's uploads cross (README, Files): of writes sent at
 * once, each within the quota alone and together past it, exactly those that fit are made,
 * the rest are 413 `quota_exceeded`, and the user's files never pass the quota.
 */

const QUOTA = 100_000;
const SIZE = 30_000;
/** How many SIZE files fit in QUOTA. */
const FIT = Math.floor(QUOTA / SIZE);

let server: AppServer;

before(async () => {
  server = await startServer({ env: { MAX_FILE_BYTES: '65536', USER_QUOTA_BYTES: String(QUOTA) } });
});

/** Distinct bytes each time: no two writes share stored bytes. */
const bytes = (n: number): Buffer => Buffer.alloc(SIZE, `${n}:${Math.random()}`);

/** The bytes of the files the user's pastes hold, read back through paste.php. */
async function held(token: string, hashes: readonly string[]): Promise<number> {
  let total = 0;
  for (const hash of hashes) {
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal(r.status, 200, r.text);
    for (const f of (r.json['paste'] as { files: { size: number }[] }).files) total += f.size;
  }
  return total;
}

/** Splits answers into the writes made and the refusals, each refusal checked to be the quota's. */
function outcome(answers: readonly Res[]): Res[] {
  const made = answers.filter((a) => a.status === 200);
  for (const a of answers.filter((x) => x.status !== 200)) {
    assert.equal(a.status, 413, a.text);
    assert.equal(a.json['code'], 'quota_exceeded', a.text);
  }
  return made;
}

describe('the quota across writes of one user at once', () => {
  test('parallel multipart creates: exactly those that fit are made, the rest 413 quota_exceeded', async () => {
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sendFiles(server, token, { content: `create ${i}` }, [{ name: `f${i}.bin`, bytes: bytes(i) }]),
      ),
    );
    const made = outcome(answers);
    assert.equal(made.length, FIT, answers.map((a) => a.status).join(' '));
    const used = await held(
      token,
      made.map((a) => a.json['hash'] as string),
    );
    assert.equal(used, FIT * SIZE);
    assert.ok(used <= QUOTA);
    // Full now: one more is refused, one with no file is not.
    const more = await sendFiles(server, token, { content: 'one more' }, [{ name: 'x.bin', bytes: bytes(99) }]);
    assert.equal(more.status, 413, more.text);
    assert.equal((await sendFiles(server, token, { content: 'text only' }, [])).status, 200);
  });

  test('parallel edits adding files to several pastes: exactly those that fit are made', async () => {
    const token = await makeToken(server.dataDir, { user: 'bob' });
    const pastes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: `paste ${i}` } });
      assert.equal(r.status, 200, r.text);
      pastes.push(r.json['hash'] as string);
    }
    const answers = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        sendFiles(
          server,
          token,
          { hash: pastes[i % pastes.length] as string },
          [{ name: `e${i}.bin`, bytes: bytes(i) }],
          '/api/v1/paste_edit.php',
        ),
      ),
    );
    assert.equal(outcome(answers).length, FIT, answers.map((a) => a.status).join(' '));
    const used = await held(token, pastes);
    assert.equal(used, FIT * SIZE);
  });

  test('creates and edits together, and a removal that frees room in the same edit', async () => {
    const token = await makeToken(server.dataDir, { user: 'carol' });
    const first = await sendFiles(server, token, { content: 'first' }, [{ name: 'old.bin', bytes: bytes(0) }]);
    assert.equal(first.status, 200, first.text);
    const hash = first.json['hash'] as string;
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, (_, i) =>
        sendFiles(server, token, { content: `c${i}` }, [{ name: `c${i}.bin`, bytes: bytes(10 + i) }]),
      ),
      ...Array.from({ length: 3 }, (_, i) =>
        sendFiles(server, token, { hash }, [{ name: `e${i}.bin`, bytes: bytes(20 + i) }], '/api/v1/paste_edit.php'),
      ),
    ]);
    const made = outcome(answers);
    assert.equal(made.length, FIT - 1, answers.map((a) => a.status).join(' '));
    const created = made.filter((a) => a.json['hash'] !== hash).map((a) => a.json['hash'] as string);
    assert.equal(await held(token, [hash, ...created]), FIT * SIZE);
    // Full; an edit that removes a file as it adds one of the same size fits.
    const swap = await sendFiles(
      server,
      token,
      { hash, remove_file: 'old.bin' },
      [{ name: 'new.bin', bytes: bytes(30) }],
      '/api/v1/paste_edit.php',
    );
    assert.equal(swap.status, 200, swap.text);
    assert.equal(await held(token, [hash, ...created]), FIT * SIZE);
  });
});
