import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  envelopeLength,
  envelopeProblem,
  fromBase64url,
  MAX_FILE_HEAD_BYTES,
  MAX_ITERATIONS,
  MIN_ITERATIONS,
  sealedFileBytes,
  PBKDF2_ITERATIONS,
  toBase64url,
} from '../../src/paste/envelope.ts';
import {
  decryptEnvelope,
  EnvelopeRefused,
  encryptBytes,
  encryptText,
  newKey,
  openEnvelope,
  openFile,
  sealFile,
} from '../../src/paste/envelope-crypto.ts';

/** The fewest iterations an envelope may name, so the password cases stay fast. */
const FAST = { iterations: MIN_ITERATIONS };

const refused = (kind: EnvelopeRefused['kind']) => (err: unknown) =>
  err instanceof EnvelopeRefused && err.kind === kind;

/** `envelope` with one byte of its ciphertext (or tag) flipped. */
function tampered(envelope: string, at: number): string {
  const e = JSON.parse(envelope) as Record<string, string>;
  const ct = fromBase64url(e['ct'] as string);
  ct[at < 0 ? ct.length + at : at] = (ct[at < 0 ? ct.length + at : at] as number) ^ 1;
  return JSON.stringify({ ...e, ct: toBase64url(ct) });
}

describe('the encryption envelope', () => {
  test('round trip: the link key opens what it encrypted, with and without a password', async () => {
    const key = newKey();
    assert.match(key, /^[A-Za-z0-9_-]{43}$/);
    const text = 'print("héllo")\n\u{1f600} and \u0000 too';
    const plain = await encryptText(text, key);
    assert.equal(envelopeProblem(plain), null);
    assert.deepEqual(Object.keys(JSON.parse(plain)).sort(), ['alg', 'ct', 'iv', 'v']);
    assert.equal(await decryptEnvelope(plain, key), text);
    const locked = await encryptText(text, key, { password: 'hunter2', ...FAST });
    assert.equal(envelopeProblem(locked), null);
    const fields = JSON.parse(locked) as Record<string, unknown>;
    assert.equal(fields['kdf'], 'PBKDF2-SHA-256');
    assert.equal(fields['iter'], MIN_ITERATIONS);
    assert.equal(await decryptEnvelope(locked, key, 'hunter2'), text);
    assert.doesNotMatch(plain + locked, /h.llo/);
  });

  test('the default PBKDF2 count is the documented one', async () => {
    const envelope = await encryptText('x', newKey(), { password: 'p' });
    assert.equal((JSON.parse(envelope) as { iter: number }).iter, PBKDF2_ITERATIONS);
    assert.equal(PBKDF2_ITERATIONS, 600_000);
  });

  test('a changed byte of the ciphertext or of the tag is refused (GCM)', async () => {
    const key = newKey();
    const envelope = await encryptText('some text to protect', key);
    await assert.rejects(decryptEnvelope(tampered(envelope, 0), key), refused('key'));
    await assert.rejects(decryptEnvelope(tampered(envelope, -1), key), refused('key'));
    const iv = JSON.parse(envelope) as Record<string, string>;
    const otherIv = JSON.stringify({ ...iv, iv: toBase64url(new Uint8Array(12)) });
    await assert.rejects(decryptEnvelope(otherIv, key), refused('key'));
  });

  test('a wrong key is refused, and so is something that is not a key', async () => {
    const envelope = await encryptText('text', newKey());
    await assert.rejects(decryptEnvelope(envelope, newKey()), refused('key'));
    await assert.rejects(decryptEnvelope(envelope, 'short'), refused('key'));
    await assert.rejects(decryptEnvelope(envelope, ''), refused('key'));
  });

  test('a wrong or missing password is refused; the right password with a wrong key too', async () => {
    const key = newKey();
    const envelope = await encryptText('text', key, { password: 'right', ...FAST });
    await assert.rejects(decryptEnvelope(envelope, key, 'wrong'), refused('key'));
    await assert.rejects(decryptEnvelope(envelope, key), refused('key'));
    await assert.rejects(decryptEnvelope(envelope, newKey(), 'right'), refused('key'));
  });

  test('a version the code does not know is refused as such, by the server and the reader', async () => {
    const key = newKey();
    const envelope = JSON.parse(await encryptText('text', key)) as Record<string, unknown>;
    const v2 = JSON.stringify({ ...envelope, v: 2 });
    assert.match(String(envelopeProblem(v2)), /version must be 1/);
    assert.throws(() => openEnvelope(v2), refused('version'));
    await assert.rejects(decryptEnvelope(v2, key), refused('version'));
  });

  test('the server refuses what has not the envelope shape', async () => {
    const good = JSON.parse(await encryptText('text', newKey(), { password: 'p', ...FAST })) as Record<string, unknown>;
    const cases: [string, string][] = [
      ['plain text', 'not JSON'],
      ['[1]', 'JSON object'],
      ['null', 'JSON object'],
      [JSON.stringify({ ...good, extra: 1 }), 'exactly'],
      [JSON.stringify({ v: 1, alg: 'AES-256-GCM', iv: good['iv'] }), 'exactly'],
      [JSON.stringify({ ...good, alg: 'AES-128-CBC' }), 'alg'],
      [JSON.stringify({ ...good, iv: 'AAAA' }), 'iv'],
      [JSON.stringify({ ...good, iv: `${String(good['iv']).slice(1)}+` }), 'iv'],
      [JSON.stringify({ ...good, ct: 'AAAA' }), 'ct'],
      [JSON.stringify({ ...good, ct: 'A'.repeat(25) }), 'ct'],
      [JSON.stringify({ ...good, kdf: 'scrypt' }), 'kdf'],
      [JSON.stringify({ ...good, iter: 1000 }), 'iter'],
      [JSON.stringify({ ...good, iter: 1e9 }), 'iter'],
      [JSON.stringify({ ...good, iter: '600000' }), 'iter'],
      [JSON.stringify({ ...good, salt: 'AA' }), 'salt'],
    ];
    for (const [text, word] of cases) {
      const problem = envelopeProblem(text);
      assert.ok(problem !== null, text);
      assert.ok(problem.includes(word === 'not JSON' ? 'JSON object' : word), `${text}: ${problem}`);
      assert.throws(() => openEnvelope(text), refused('shape'));
    }
  });

  test("a file's envelope holds its name, type, size and bytes, any bytes; a wrong key, password or size is refused", async () => {
    const key = newKey();
    const bytes = new Uint8Array([0, 0xff, 0x0a, 0x89, 0x50, 0x4e, 0x47, 0x0a, 0xc3]);
    const name = 'räpport\n"x".bin';
    const text = await sealFile({ name, type: 'image/png', size: 999 }, bytes, key, { password: 'pw', ...FAST });
    assert.equal(envelopeProblem(text), null, 'the same envelope as the text');
    assert.ok(!text.includes('pport'));
    const opened = await openFile(text, key, 'pw');
    assert.deepEqual([opened.name, opened.type, opened.size, [...opened.bytes]], [name, 'image/png', 9, [...bytes]]);
    await assert.rejects(openFile(text, key, 'wrong'), refused('key'));
    await assert.rejects(openFile(text, newKey(), 'pw'), refused('key'));
    const lying = await encryptBytes(new TextEncoder().encode('{"name":"a","type":"","size":5}\nabc'), key);
    await assert.rejects(openFile(lying, key), refused('shape'));
    const headless = await encryptText('no head at all', key);
    await assert.rejects(openFile(headless, key), refused('shape'));
  });

  test('envelopeLength is the length of the envelope made, to the byte, with and without a password', async () => {
    const key = newKey();
    for (let n = 0; n <= 40; n++) {
      const bytes = new Uint8Array(n).fill(n);
      assert.equal((await encryptBytes(bytes, key)).length, envelopeLength(n), `${n} bytes`);
      const locked = await encryptBytes(bytes, key, { password: 'pw', ...FAST });
      assert.equal(locked.length, envelopeLength(n, { iter: MIN_ITERATIONS }), `${n} bytes with a password`);
    }
    assert.equal(
      envelopeLength(30_000, { iter: MAX_ITERATIONS }),
      envelopeLength(30_000, { iter: MIN_ITERATIONS }) + 2,
    );
  });

  test("a file's head is at most MAX_FILE_HEAD_BYTES, so a file's largest envelope is sealedFileBytes of its size", async () => {
    const key = newKey();
    const size = 5000;
    const bytes = new Uint8Array(size);
    // The longest name a file system gives, every character a quote (two bytes escaped), still fits.
    const quotes = await sealFile({ name: '"'.repeat(255), type: 'x'.repeat(127), size }, bytes, key);
    assert.equal((await openFile(quotes, key)).name, '"'.repeat(255));
    // Control characters take six bytes each escaped: a name full of them passes the bound and is refused.
    await assert.rejects(sealFile({ name: '\u0001'.repeat(255), type: 't', size }, bytes, key), refused('shape'));
    // A head of exactly the bound, with a password of the highest count: the largest envelope, sealedFileBytes.
    const bare = `${JSON.stringify({ name: '', type: 't', size })}\n`.length;
    const name = 'n'.repeat(MAX_FILE_HEAD_BYTES - bare);
    const largest = await sealFile({ name, type: 't', size }, bytes, key, { password: 'pw', ...FAST });
    const moreDigits = String(MAX_ITERATIONS).length - String(MIN_ITERATIONS).length;
    assert.equal(largest.length + moreDigits, sealedFileBytes(size));
    // One byte more of head is refused before anything is encrypted; a type no reader knows is dropped.
    await assert.rejects(sealFile({ name: `${name}n`, type: 't', size }, bytes, key), refused('shape'));
    const odd = await sealFile({ name: 'a', type: 'y'.repeat(128), size }, bytes, key);
    assert.equal((await openFile(odd, key)).type, 'application/octet-stream');
  });
});
