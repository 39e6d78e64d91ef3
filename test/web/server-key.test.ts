import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadServerKey, sign, verify } from '../../src/auth/server-key.ts';
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
    const keys = await Promise.all([loadServerKey(files, path), loadServerKey(files, path), loadServerKey(files, path)]);
    for (const k of keys) assert.deepEqual(k, keys[0]);
    assert.equal(await readFile(path, 'utf8'), keys[0]?.toString('hex'));
  });

  test('a signature verifies only for its own key, purpose and data', () => {
    const key = Buffer.alloc(32, 1);
    const mac = sign(key, 'csrf', 'nonce');
    assert.match(mac, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(verify(key, 'csrf', 'nonce', mac));
    assert.ok(!verify(Buffer.alloc(32, 2), 'csrf', 'nonce', mac), 'another key');
    assert.ok(!verify(key, 'unlock', 'nonce', mac), 'another purpose');
    assert.ok(!verify(key, 'csrf', 'nonce2', mac), 'other data');
    assert.ok(!verify(key, 'csrf', 'nonce', mac.slice(1)), 'a truncated MAC');
    assert.ok(!verify(key, 'csrf', 'nonce', `${mac.slice(0, -1)}é`), 'a MAC of the same length in characters, not bytes');
  });
});
