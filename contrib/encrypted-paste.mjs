#!/usr/bin/env node
// Encrypted pastes from the shell (README, Encrypted pastes): Node 20's WebCrypto, no dependency.
//
//   PASTE_URL=https://paste.example PASTE_TOKEN=... node encrypted-paste.mjs put FILE|- [--title T]
//       [--language L] [--expiry 1d] [--privacy unlisted] [--burn]     prints the link, key in its fragment
//   PASTE_TOKEN=... node encrypted-paste.mjs get 'https://paste.example/p/<hash>#<key>'   prints the text
//
// PASTE_PASSWORD, when set, is needed as well as the link (PBKDF2-HMAC-SHA-256, 600000 rounds).
// The server receives only the envelope: {"v":1,"alg":"AES-256-GCM","iv","ct"[,"kdf","iter","salt"]}.
import { readFileSync } from 'node:fs';

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

async function put(file, flags) {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const password = process.env.PASTE_PASSWORD ?? '';
  const key = b64(random(32));
  const [iv, salt] = [random(12), random(16)];
  const aes = await aesKey(key, password, salt, ITERATIONS);
  const ct = await subtle.encrypt({ name: 'AES-GCM', iv }, aes, new TextEncoder().encode(text));
  const envelope = { v: 1, alg: 'AES-256-GCM', iv: b64(iv), ct: b64(new Uint8Array(ct)) };
  if (password !== '') Object.assign(envelope, { kdf: 'PBKDF2-SHA-256', iter: ITERATIONS, salt: b64(salt) });
  const base = (process.env.PASTE_URL ?? 'http://localhost:8080').replace(/\/$/, '');
  const body = { ...flags, content: JSON.stringify(envelope), encrypted: 1 };
  const res = await fetch(`${base}/api/v1/paste_create.php`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.PASTE_TOKEN ?? ''}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (!answer.ok) fail(`${res.status} ${answer.error ?? res.statusText}`);
  process.stdout.write(`${answer.url}#${key}\n`);
}

async function get(link) {
  const url = new URL(link);
  const hash = /^\/p\/([A-Za-z0-9]{10})$/.exec(url.pathname)?.[1];
  if (hash === undefined) fail('the link must be of the form https://host/p/<hash>#<key>');
  const headers = { authorization: `Bearer ${process.env.PASTE_TOKEN ?? ''}` };
  if (process.env.PASTE_SERVER_PASSWORD) headers['x-paste-password'] = process.env.PASTE_SERVER_PASSWORD;
  const res = await fetch(`${url.origin}/api/v1/paste.php?hash=${hash}`, { headers });
  const answer = await res.json().catch(() => ({}));
  if (!answer.ok) fail(`${res.status} ${answer.error ?? res.statusText}`);
  if (answer.paste.encrypted !== 1) fail('this paste is not encrypted');
  const e = JSON.parse(answer.paste.content);
  if (e.v !== 1 || e.alg !== 'AES-256-GCM') fail(`an envelope of version ${e.v} (${e.alg}) is not known here`);
  const password = e.kdf === undefined ? '' : (process.env.PASTE_PASSWORD ?? '');
  if (e.kdf !== undefined && password === '') fail('this paste also needs its password: set PASTE_PASSWORD');
  const aes = await aesKey(url.hash.slice(1), password, e.salt && unb64(e.salt), e.iter);
  const plain = await subtle
    .decrypt({ name: 'AES-GCM', iv: unb64(e.iv) }, aes, unb64(e.ct))
    .catch(() => fail('this paste is encrypted; the link you have lacks its key (or the password is wrong)'));
  process.stdout.write(new TextDecoder('utf-8', { fatal: true }).decode(plain));
}

const [command, arg, ...rest] = process.argv.slice(2);
const flags = {};
for (let i = 0; i < rest.length; i++) {
  const name = rest[i];
  if (name === '--burn') flags.burn_after_read = 1;
  else if (['--title', '--language', '--expiry', '--privacy'].includes(name) && rest[i + 1] !== undefined)
    flags[name.slice(2)] = rest[++i];
  else fail(`unknown option ${name}`);
}
if (command === 'put' && arg !== undefined) await put(arg, flags);
else if (command === 'get' && arg !== undefined && rest.length === 0) await get(arg);
else fail('usage: encrypted-paste.mjs put FILE|- [--title T] [--language L] [--expiry E] [--privacy P] [--burn] | get LINK');
