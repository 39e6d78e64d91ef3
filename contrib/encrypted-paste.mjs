#!/usr/bin/env node
// Encrypted pastes from the shell (README, Encrypted pastes): Node 20's WebCrypto, no dependency.
//
//   PASTE_URL=https://paste.example PASTE_TOKEN=... node encrypted-paste.mjs put FILE|- [--file F]...
//       [--title T] [--language L] [--expiry 1d] [--privacy unlisted] [--burn]   prints the link, key in its fragment
//   PASTE_TOKEN=... node encrypted-paste.mjs get 'https://paste.example/p/<hash>#<key>' [--files DIR]
//       prints the text; with --files, decrypts the paste's files into DIR under their real names
//
// PASTE_PASSWORD, when set, is needed as well as the link (PBKDF2-HMAC-SHA-256, 600000 rounds).
// The server receives only envelopes: {"v":1,"alg":"AES-256-GCM","iv","ct"[,"kdf","iter","salt"]}; each file
// is one, sent as f1.enc, f2.enc, ..., its plaintext {"name","type","size"}, a newline, then its bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const ITERATIONS = 600_000;
const { subtle } = globalThis.crypto;
const b64 = (bytes) => Buffer.from(bytes).toString('base64url');
const unb64 = (s) => new Uint8Array(Buffer.from(s, 'base64url'));
const random = (n) => globalThis.crypto.getRandomValues(new Uint8Array(n));

function fail(message) {
  process.stderr.write(`encrypted-paste: ${message}\n`);
  process.exit(1);
}

// The AES key: the link key itself, or with a password PBKDF2 of the key's bytes and the password.
async function aesKey(key, password, salt, iter) {
  if (!/^[A-Za-z0-9_-]{43}$/.test(key)) fail('this paste is encrypted; the link you have lacks its key');
  if (password === '') return subtle.importKey('raw', unb64(key), 'AES-GCM', false, ['encrypt', 'decrypt']);
  const secret = new Uint8Array([...unb64(key), ...new TextEncoder().encode(password)]);
  const base = await subtle.importKey('raw', secret, 'PBKDF2', false, ['deriveKey']);
  const params = { name: 'PBKDF2', salt, iterations: iter, hash: 'SHA-256' };
  return subtle.deriveKey(params, base, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
}

// One envelope: the bytes under the link key (and the password, with a salt of its own).
async function seal(bytes, key, password) {
  const [iv, salt] = [random(12), random(16)];
  const aes = await aesKey(key, password, salt, ITERATIONS);
  const ct = await subtle.encrypt({ name: 'AES-GCM', iv }, aes, bytes);
  const envelope = { v: 1, alg: 'AES-256-GCM', iv: b64(iv), ct: b64(new Uint8Array(ct)) };
  if (password !== '') Object.assign(envelope, { kdf: 'PBKDF2-SHA-256', iter: ITERATIONS, salt: b64(salt) });
  return JSON.stringify(envelope);
}

// A file's plaintext: its name, type and size as JSON, a newline, then its bytes (docs/encrypted-pastes.md).
// Images by their extension, so the paste page shows them; anything else is only a download.
const IMAGE_TYPES = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };
// The head's bound (src/paste/envelope.ts, MAX_FILE_HEAD_BYTES): the server's limit on an envelope counts on it.
const MAX_FILE_HEAD_BYTES = 1024;

function fileBytes(path) {
  const bytes = readFileSync(path);
  const name = basename(path);
  const ext = name.split('.').pop().toLowerCase();
  const type = Object.hasOwn(IMAGE_TYPES, ext) ? IMAGE_TYPES[ext] : 'application/octet-stream';
  const head = Buffer.from(`${JSON.stringify({ name, type, size: bytes.length })}\n`);
  if (head.length > MAX_FILE_HEAD_BYTES) fail(`${path}: the file name is too long to encrypt`);
  return new Uint8Array(Buffer.concat([head, bytes]));
}

async function put(file, flags, files) {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const password = process.env.PASTE_PASSWORD ?? '';
  const key = b64(random(32));
  const base = (process.env.PASTE_URL ?? 'http://localhost:8080').replace(/\/$/, '');
  const content = await seal(new TextEncoder().encode(text), key, password);
  const headers = { authorization: `Bearer ${process.env.PASTE_TOKEN ?? ''}` };
  let body;
  if (files.length === 0) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify({ ...flags, content, encrypted: 1 });
  } else {
    // Multipart, each file an envelope under an opaque name: the server learns neither names nor bytes.
    // The fields go first: encrypted=1 ahead of the files is what lets an envelope pass MAX_FILE_BYTES.
    body = new FormData();
    for (const [name, value] of Object.entries({ ...flags, content, encrypted: 1 })) body.append(name, String(value));
    for (const [i, path] of files.entries()) {
      const envelope = await seal(fileBytes(path), key, password);
      body.append('file', new Blob([envelope], { type: 'application/octet-stream' }), `f${i + 1}.enc`);
    }
  }
  const res = await fetch(`${base}/api/v1/paste_create.php`, { method: 'POST', headers, body });
  const answer = await res.json().catch(() => ({}));
  if (!answer.ok) fail(`${res.status} ${answer.error ?? res.statusText}`);
  process.stdout.write(`${answer.url}#${key}\n`);
}

// The plaintext of an envelope's JSON text, or a failure that names no secret.
async function open(text, key, password) {
  let e;
  try {
    e = JSON.parse(text);
  } catch {
    fail('what the server sent is not an encryption envelope');
  }
  if (e.v !== 1 || e.alg !== 'AES-256-GCM') fail(`an envelope of version ${e.v} (${e.alg}) is not known here`);
  if (e.kdf !== undefined && password === '') fail('this paste also needs its password: set PASTE_PASSWORD');
  const aes = await aesKey(key, e.kdf === undefined ? '' : password, e.salt && unb64(e.salt), e.iter);
  const plain = await subtle
    .decrypt({ name: 'AES-GCM', iv: unb64(e.iv) }, aes, unb64(e.ct))
    .catch(() => fail('this paste is encrypted; the link you have lacks its key (or the password is wrong)'));
  return new Uint8Array(plain);
}

// A decrypted file's name is the author's: kept only as a plain name in the folder, never a path.
function safeName(name) {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || /[/\\\u0000-\u001f\u007f]/.test(name))
    fail(`a file of this paste has a name that is not a plain file name: ${JSON.stringify(name)}`);
  return name;
}

async function get(link, dir) {
  const url = new URL(link);
  const hash = /^\/p\/([A-Za-z0-9]{10})$/.exec(url.pathname)?.[1];
  if (hash === undefined) fail('the link must be of the form https://host/p/<hash>#<key>');
  const key = url.hash.slice(1);
  const headers = { authorization: `Bearer ${process.env.PASTE_TOKEN ?? ''}` };
  if (process.env.PASTE_SERVER_PASSWORD) headers['x-paste-password'] = process.env.PASTE_SERVER_PASSWORD;
  const res = await fetch(`${url.origin}/api/v1/paste.php?hash=${hash}`, { headers });
  const answer = await res.json().catch(() => ({}));
  if (!answer.ok) fail(`${res.status} ${answer.error ?? res.statusText}`);
  if (answer.paste.encrypted !== 1) fail('this paste is not encrypted');
  const password = process.env.PASTE_PASSWORD ?? '';
  const plain = await open(answer.paste.content, key, password);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(plain);
  if (dir !== undefined) {
    for (const f of answer.paste.files ?? []) {
      // A one-time paste's read hands each file a url that fetches it once.
      const where = f.url ?? `${url.origin}/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(f.name)}`;
      const got = await fetch(where, { headers });
      if (!got.ok) fail(`${got.status} fetching ${f.name}`);
      const bytes = await open(await got.text(), key, password);
      const nl = bytes.indexOf(0x0a);
      let head;
      try {
        head = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, nl)));
      } catch {
        head = null;
      }
      const body = bytes.subarray(nl + 1);
      if (nl < 0 || head?.size !== body.length) fail(`${f.name} does not begin with its name, type and size`);
      // "wx": a file already in the folder is never overwritten.
      try {
        writeFileSync(join(dir, safeName(head.name)), body, { flag: 'wx' });
      } catch (err) {
        fail(`cannot write ${head.name} in ${dir}: ${err.code ?? err.message}`);
      }
      process.stderr.write(`${head.name} (${body.length} bytes)\n`);
    }
  }
  process.stdout.write(text);
}

const [command, ...args] = process.argv.slice(2);
const flags = {};
const files = [];
const positional = [];
let dir;
for (let i = 0; i < args.length; i++) {
  const name = args[i];
  if (name === '--burn') flags.burn_after_read = 1;
  else if (['--title', '--language', '--expiry', '--privacy'].includes(name) && args[i + 1] !== undefined)
    flags[name.slice(2)] = args[++i];
  else if (name === '--file' && args[i + 1] !== undefined) files.push(args[++i]);
  else if (name === '--files' && args[i + 1] !== undefined) dir = args[++i];
  else if (name.startsWith('--')) fail(`unknown option ${name}`);
  else positional.push(name);
}
const getting = command === 'get' && Object.keys(flags).length === 0 && files.length === 0;
if (command === 'put' && positional.length === 1 && dir === undefined) await put(positional[0], flags, files);
else if (getting && positional.length === 1) await get(positional[0], dir);
else
  fail(
    'usage: encrypted-paste.mjs put FILE|- [--file F]... [--title T] [--language L] [--expiry E] [--privacy P] [--burn] | get LINK [--files DIR]',
  );
