import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Signer, sign } from '../../src/crypto/signature.ts';
import { loadServerKey, SERVER_KEY_PATH } from '../../src/store/server-key.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map(cleanup)));

describe('server key', () => {
  test('two loads racing on a fresh folder agree on one key, stored as 64 hex digits', async () => {
    const dir = await tempDataDir();
    dirs.push(dir);
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const path = join(dir, 'server.key');
    const keys = await Promise.all([
      loadServerKey(files, path),
      loadServerKey(files, path),
      loadServerKey(files, path),
    ]);
    for (const k of keys) assert.deepEqual(k, keys[0]);
    assert.equal(await readFile(path, 'utf8'), keys[0]?.toString('hex'));
  });

  test('is made once, 32 bytes readable only by the owner, kept across loads, random per data folder', async () => {
    const dir = await tempDataDir();
    const other = await tempDataDir();
    dirs.push(dir, other);
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const path = join(dir, ...SERVER_KEY_PATH);
    const first = await loadServerKey(files, path);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal(first.length, 32);
    assert.deepEqual(await loadServerKey(files, path), first, 'the same key after a restart');
    assert.notDeepEqual(await loadServerKey(files, join(other, ...SERVER_KEY_PATH)), first, 'random per data folder');
  });

  test('a damaged key is refused rather than quietly replaced', async () => {
    const dir = await tempDataDir();
    dirs.push(dir);
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const path = join(dir, 'server.key');
    await writeFile(path, 'not a key');
    await assert.rejects(loadServerKey(files, path), /is not a server key/);
  });

  test('a signature verifies only for its own key, purpose and data', () => {
    const key = Buffer.alloc(32, 1);
    const signer = new Signer(key);
    const mac = signer.sign('csrf', 'nonce');
    assert.equal(mac, sign(key, 'csrf', 'nonce'));
    assert.match(mac, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(signer.verify('csrf', 'nonce', mac));
    assert.ok(!new Signer(Buffer.alloc(32, 2)).verify('csrf', 'nonce', mac), 'another key');
    assert.ok(!signer.verify('unlock', 'nonce', mac), 'another purpose');
    assert.ok(!signer.verify('csrf', 'nonce2', mac), 'other data');
    assert.ok(!signer.verify('csrf', 'nonce', mac.slice(1)), 'a truncated MAC');
    assert.ok(
      !signer.verify('csrf', 'nonce', `${mac.slice(0, -1)}é`),
      'a MAC of the same length in characters, not bytes',
    );
  });

  test('verifying the same message again, often and among many others, answers the same', () => {
    const signer = new Signer(Buffer.alloc(32, 3));
    const other = new Signer(Buffer.alloc(32, 4));
    const mac = signer.sign('unlock', 'grant');
    for (let i = 0; i < 3; i++) {
      assert.ok(signer.verify('unlock', 'grant', mac));
      assert.ok(!other.verify('unlock', 'grant', mac), 'a signature kept for one key is not another key’s');
      assert.ok(!signer.verify('unlock', 'grant', other.sign('unlock', 'grant')));
    }
    // More messages than are kept: the kept ones are let go, and every answer stays right.
    for (let i = 0; i < 5_000; i++) assert.ok(signer.verify('csrf', `n${i}`, signer.sign('csrf', `n${i}`)));
    assert.ok(signer.verify('unlock', 'grant', mac));
    assert.ok(!signer.verify('unlock', 'grant', signer.sign('unlock', 'grant2')));
  });

  test('a signer keeps what it verified, once per message, and never more than its bound', () => {
    const signer = new Signer(Buffer.alloc(32, 5), 10);
    const other = new Signer(Buffer.alloc(32, 5), 10);
    const mac = signer.sign('csrf', 'a');
    assert.equal(signer.kept, 0, 'signing keeps nothing');
    signer.verify('csrf', 'a', mac);
    signer.verify('csrf', 'a', 'wrong');
    assert.equal(signer.kept, 1, 'one message, however often it is checked');
    assert.equal(other.kept, 0, 'each signer keeps its own');
    for (let i = 0; i < 25; i++) {
      signer.verify('csrf', `m${i}`, 'x');
      assert.ok(signer.kept <= 10, `${signer.kept} kept`);
    }
    assert.ok(signer.verify('csrf', 'a', mac), 'a message let go is computed again');
  });
});
