/**
 * The reference server: a bare node:http server that does the least possible work for the
 * requests the bench sends, to show what this machine can do at all.
 * - GET /api/v1/paste.php?hash=  → Map lookup, a precomputed JSON body the size of ours
 * - GET /api/v1/raw.php?hash=    → Map lookup, a precomputed text body
 * - POST /api/v1/paste_create.php → read body, JSON.parse, temp file + fsync + rename +
 *   fsync of the folder (the durability our store promises), a small JSON answer
 * - GET /api/v1/file.php?hash=&name= and /p/{hash}/files/{name} → the seeded image's bytes
 *   from one Buffer made at start (bench/seed.ts, benchPng), as image/png
 * Run as its own process: REF_MANIFEST (the seeder's JSON), REF_DIR, HOST, PORT.
 *
 * REF_WORK (the bench's `--reference-work`) adds some of the work the README asks of every
 * API answer, to show what that work alone costs a server this bare: `headers` sends the
 * five headers our API reads carry besides Content-Type and Content-Length (X-Request-Id,
 * X-Content-Type-Options, Cache-Control, X-RateLimit-Limit, ETag; raw.php's also
 * Content-Security-Policy; a file's, those of ours: fileHead); `log` builds each API read's
 * JSON line, as our log does, into memory (our log writes them once a second).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { benchPng, type Seeded } from './seed.ts';

const manifest = JSON.parse(readFileSync(process.env['REF_MANIFEST'] ?? '', 'utf8')) as Seeded;
const dir = process.env['REF_DIR'] ?? '';
const tmpDir = join(dir, 'tmp');
const pasteDir = join(dir, 'pastes');
const BASE = 'http://localhost:0';

const json = 'application/json; charset=utf-8';
const text = 'text/plain; charset=utf-8';
const pages = new Map<string, Buffer>();
const raws = new Map<string, Buffer>();

function preload(hash: string, bytes: number): void {
  const content = `${'x'.repeat(bytes - 1)}\n`;
  raws.set(hash, Buffer.from(content));
  // The same fields as our Paste object, so the body is the same size.
  const paste = {
    hash,
    title: 'bench paste 0000',
    content,
    language: 'text',
    privacy: 'public',
    burn_after_read: 0,
    short_url: `${BASE}/s/${hash.slice(0, 6)}`,
    created_at: '2025-01-01 00:00:00',
    expire_at: null,
    view_count: 1,
    owner: { id: 1, display_name: 'bench' },
  };
  pages.set(hash, Buffer.from(JSON.stringify({ ok: true, paste })));
}
manifest.hashes.forEach((h, i) => {
  preload(h, manifest.sizes[i] ?? 1000);
});
if (manifest.big !== null) preload(manifest.big.hash, manifest.big.bytes);
for (const h of Object.values(manifest.web ?? {})) preload(h, 760);
/** The seeded image's bytes, drawn again from its seed and checked against the manifest's SHA-256. */
const image = manifest.image ?? null;
const imageBody = image === null ? null : benchPng(image.bytes);
if (
  image !== null &&
  createHash('sha256')
    .update(imageBody as Buffer)
    .digest('hex') !== image.sha256
)
  throw new Error('the reference drew other bytes than the seeded image');

/** Short codes to hashes, for `/s/{code}`. */
const codes = new Map([...pages.keys()].map((h) => [h.slice(0, 6), h]));

/** The home page's answer: a paste page's body, from memory like the others. */
const homeBody =
  pages.get(Object.values(manifest.web ?? {})[0] ?? manifest.hashes[0] ?? '') ?? Buffer.from('<!doctype html>');

/**
 * The web paths, with the same least work: `/p/{hash}` answers the paste's body from
 * memory (as the issue that set the page's goal measured it), `/p/{hash}/raw` its text,
 * `/s/{code}` a 302 to `/p/{hash}`, and `/` a page body from memory.
 */
function web(res: ServerResponse, url: string): boolean {
  if (url === '/') {
    send(res, 200, 'text/html; charset=utf-8', homeBody);
    return true;
  }
  if (url.startsWith('/p/') && url.includes('/files/')) return file(res, url);
  if (url.startsWith('/p/')) {
    const hash = url.slice(3, 13);
    const body = url.endsWith('/raw') ? raws.get(hash) : pages.get(hash);
    if (body === undefined) return false;
    send(res, 200, url.endsWith('/raw') ? text : 'text/html; charset=utf-8', body);
    return true;
  }
  const hash = url.startsWith('/s/') ? codes.get(url.slice(3, 9)) : undefined;
  if (hash === undefined) return false;
  res.writeHead(302, { location: `${BASE}/p/${hash}`, 'content-length': 0 });
  res.end();
  return true;
}

const notFound = Buffer.from('{"ok":false,"error":"Not found"}');

function send(res: ServerResponse, status: number, type: string, body: Buffer): void {
  res.writeHead(status, { 'content-type': type, 'content-length': body.length });
  res.end(body);
}

const work = new Set((process.env['REF_WORK'] ?? '').split(',').filter((w) => w !== ''));
for (const w of work)
  if (w !== 'headers' && w !== 'log') throw new Error(`REF_WORK: unknown work "${w}" (headers, log)`);
const withHeaders = work.has('headers');
const withLog = work.has('log');
let requests = 0;

function read(res: ServerResponse, url: string, bodies: Map<string, Buffer>, type: string): void {
  const started = withLog ? performance.now() : 0;
  const i = url.indexOf('hash=');
  const hash = i === -1 ? '' : url.slice(i + 5, i + 15);
  const body = bodies.get(hash);
  if (!withHeaders) {
    if (body === undefined) send(res, 404, json, notFound);
    else send(res, 200, type, body);
  } else if (body === undefined) {
    res.writeHead(404, [
      'x-request-id',
      `reference-${++requests}`,
      'x-content-type-options',
      'nosniff',
      'cache-control',
      'no-store',
      'x-ratelimit-limit',
      '0',
      'content-type',
      json,
      'content-length',
      String(notFound.length),
    ]);
    res.end(notFound);
  } else {
    const head = [
      'x-request-id',
      `reference-${++requests}`,
      'x-content-type-options',
      'nosniff',
      'cache-control',
      'no-store',
      'x-ratelimit-limit',
      '0',
      'etag',
      `"${hash}.1"`,
    ];
    // Ours sends the text of raw.php under a sandbox, as the README's Raw text says.
    if (type === text) head.push('content-security-policy', 'sandbox');
    head.push('content-type', type, 'content-length', String(body.length));
    res.writeHead(200, head);
    res.end(body);
  }
  if (withLog) {
    const q = url.indexOf('?');
    logLine(q === -1 ? url : url.slice(0, q), body === undefined ? 404 : 200, performance.now() - started);
  }
}

/** The headers ours sends with a file besides Content-Type and Content-Length (pipeline/file-reply.ts). */
function fileHead(api: boolean): string[] {
  const head = ['x-request-id', `reference-${++requests}`];
  if (!api) head.push('referrer-policy', 'same-origin', 'x-frame-options', 'DENY');
  else head.push('x-ratelimit-limit', '0');
  head.push(
    'cache-control',
    'no-store',
    'x-content-type-options',
    'nosniff',
    'content-security-policy',
    'sandbox',
    'content-disposition',
    `inline; filename="${image?.name}"; filename*=UTF-8''${image?.name}`,
    'etag',
    `"${image?.sha256}"`,
  );
  return head;
}

/** The image, whichever paste and name are asked for: the one file the bench serves. */
function file(res: ServerResponse, url: string): true {
  if (imageBody === null) {
    send(res, 404, json, notFound);
    return true;
  }
  const head = withHeaders ? fileHead(url.startsWith('/api/')) : [];
  head.push('content-type', 'image/png', 'content-length', String(imageBody.length));
  res.writeHead(200, head);
  res.end(imageBody);
  return true;
}

/** Lines kept in memory, overwritten from the start when full. */
const lines = Buffer.alloc(8 * 1024 * 1024);
let linesAt = 0;
let isoMs = Number.NaN;
let iso = '';

/** One API log line as the README shows it, the time's text made once a millisecond (as ours is). */
function logLine(endpoint: string, status: number, ms: number): void {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  const line =
    `{"time":"${iso}","token_id":"bench000","user_id":1,"method":"GET","endpoint":"${endpoint}","status":${status},` +
    `"ip":"127.0.0.1","duration_ms":${Math.round(ms * 100) / 100}}\n`;
  if (linesAt + line.length * 3 > lines.length) linesAt = 0;
  linesAt += lines.write(line, linesAt);
}

/** temp file + fsync + rename + fsync of the folder. */
async function durableWrite(name: string, data: string): Promise<void> {
  const tmp = join(tmpDir, `${name}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, join(pasteDir, `${name}.json`));
  const d = await open(pasteDir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  const hash = randomBytes(8).toString('base64url').replace(/[-_]/g, 'a').slice(0, 10);
  await durableWrite(hash, JSON.stringify({ hash, ...body }));
  const out = { ok: true, hash, url: `${BASE}/p/${hash}`, short_url: `${BASE}/s/${hash.slice(0, 6)}` };
  send(res, 200, json, Buffer.from(JSON.stringify(out)));
}

const server = createServer({ keepAliveTimeout: 5_000, headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith('/api/v1/paste.php')) read(res, url, pages, json);
  else if (url.startsWith('/api/v1/raw.php')) read(res, url, raws, text);
  else if (url.startsWith('/api/v1/file.php')) file(res, url);
  else if (url.startsWith('/api/v1/paste_create.php') && req.method === 'POST') {
    create(req, res).catch((err: unknown) => {
      console.error(err);
      if (!res.headersSent) send(res, 500, json, Buffer.from('{"ok":false,"error":"Internal server error"}'));
    });
  } else if (url === '/healthz') send(res, 200, json, Buffer.from('{"ok":true}'));
  else if (!web(res, url)) send(res, 404, json, notFound);
});

await mkdir(tmpDir, { recursive: true });
await mkdir(pasteDir, { recursive: true });
server.listen(Number(process.env['PORT'] ?? 0), process.env['HOST'] ?? '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
const stop = (): void => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
