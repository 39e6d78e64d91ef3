import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { runCli } from '../src/cli.ts';
import { PasteService } from '../src/paste/service.ts';
import { RateLimiter } from '../src/ratelimit/bucket.ts';
import { FailureBudget } from '../src/ratelimit/failure-budget.ts';
import { ClaimedFiles, FILE_LIMIT_DEFAULTS } from '../src/paste/files.ts';
import type { CreateInput } from '../src/paste/validate.ts';
import { DiskFileBlobs, DiskFileClaims } from '../src/store/file-bytes.ts';
import { DurableFiles } from '../src/store/files.ts';
import { isErrno } from '../src/storage/errors.ts';
import { OwnerIndex } from '../src/store/owner-index.ts';
import { PasteStore } from '../src/store/pastes.ts';
import { RecentPastes } from '../src/store/recent.ts';
import { ViewCounter } from '../src/store/views.ts';

/**
 * Seeding goes through the real PasteService and PasteStore, so paths and bytes are exactly
 * what the server writes; only the fsyncs are skipped (a benchmark fixture needs no power-cut
 * safety, and 100,000 fsyncs would take minutes).
 */
class SeedFiles extends DurableFiles {
  readonly #dirs = new Set<string>();

  override async ensureDir(dir: string): Promise<void> {
    if (this.#dirs.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.#dirs.add(dir);
  }

  override async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    await this.ensureDir(dirname(path));
    await writeFile(path, data);
  }

  override async createFile(path: string, data: string | Uint8Array): Promise<boolean> {
    await this.ensureDir(dirname(path));
    try {
      await writeFile(path, data, { flag: 'wx' });
    } catch (err) {
      if (isErrno(err, 'EEXIST')) return false;
      throw err;
    }
    return true;
  }
}

/** Collects the owner index lines in memory and writes the user's file once at the end. */
class SeedOwners extends OwnerIndex {
  readonly lines: string[] = [];

  override add(_userId: number, hash: string): Promise<void> {
    this.lines.push(`+${hash}\n`);
    return Promise.resolve();
  }
}

export interface Seeded {
  /** Hashes of the ordinary pastes, in creation order. */
  hashes: string[];
  /** Content length in bytes of each paste in `hashes` (ASCII, so bytes = characters). */
  sizes: number[];
  /** The one large paste (0 when not requested). */
  big: { hash: string; bytes: number } | null;
  /**
   * Pastes for the web page scenarios, with `pages`: a 760-byte JavaScript paste, a one-time
   * one and a password one (PAGE_PASSWORD).
   */
  web: { page: string; burn: string; locked: string; markdown: string } | null;
  /** The paste holding one PNG image (benchPng, `imageBytes`), its file's name and SHA-256; null when not asked. */
  image?: { hash: string; name: string; bytes: number; sha256: string } | null;
}

/** The image's file name in its paste. */
export const IMAGE_NAME = 'bench.png';

/** The seed of the image's pixels: the reference draws the same bytes from it. */
export const IMAGE_SEED = 1_048_576;

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/**
 * A real PNG of exactly `bytes` bytes (at least 64 KB): 512 pixels wide, RGB noise that does
 * not compress, in stored deflate blocks, brought to size by a tEXt chunk. Its bytes sniff
 * as image/png, so ours serves it inline (README, Files).
 */
export function benchPng(bytes: number, seed = IMAGE_SEED): Buffer {
  const width = 512;
  const row = 1 + 3 * width;
  const rand = prng(seed);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const textKey = Buffer.from('Comment\0', 'latin1');
  // Signature, IHDR, the IDAT's and tEXt's framing and keyword, IEND.
  const framing = signature.length + 25 + 12 + 12 + textKey.length + 12;
  for (let height = Math.floor((bytes - framing) / row); height > 0; height--) {
    const raw = Buffer.alloc(height * row);
    for (let i = 0; i < raw.length; i++) raw[i] = i % row === 0 ? 0 : Math.floor(rand() * 256);
    const idat = deflateSync(raw, { level: 0 });
    const pad = bytes - framing - idat.length;
    if (pad < 0) continue;
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    return Buffer.concat([
      signature,
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', idat),
      pngChunk('tEXt', Buffer.concat([textKey, Buffer.alloc(pad, 'x')])),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
  }
  throw new Error(`benchPng: ${bytes} bytes is too small`);
}

/** The password of the bench's password-protected paste. */
export const PAGE_PASSWORD = 'bench-password';

/** The web scenarios' text: 760 bytes of JavaScript, like a snippet someone shares. */
export const PAGE_TEXT = 'function add(a, b) {\n  return a + b;\n}\n'.repeat(19);

/** The rendered Markdown page's text: a short README with a table, a task list and code. */
export const MARKDOWN_TEXT = `# bench

A *small* project, as [its site](https://example.com) says.

| command | what |
| --- | --- |
| \`make\` | builds it |
| \`make test\` | runs the tests |

- [x] highlight code
- [ ] render tables

\`\`\`javascript
${PAGE_TEXT.slice(0, 240)}\`\`\`
`;

export interface Credentials {
  /** read,write, unlimited. */
  token: string;
  /** read,write with a rate limit so high it never refuses, so the bucket code still runs. */
  limitedToken: string;
}

/** A small deterministic PRNG (mulberry32), so every run seeds the same sizes and words. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'const',
  'value',
  'return',
  'paste',
  'server',
  'error',
  'function',
  'the',
  'of',
  'log',
  'cache',
  'node',
  '=',
  '{',
  '}',
  '(x)',
  'if',
  'let',
  'data',
];

/** ASCII text of exactly `bytes` bytes, in lines of words. */
export function textOfSize(bytes: number, rand: () => number): string {
  let out = '';
  let line = 0;
  while (out.length < bytes) {
    const w = WORDS[Math.floor(rand() * WORDS.length)] as string;
    line += w.length + 1;
    out += line > 72 ? ((line = 0), `${w}\n`) : `${w} `;
  }
  return `${out.slice(0, bytes - 1)}\n`;
}

/**
 * Creates the bench user and its two tokens through the operator CLI, in-process, in the
 * data folder or in the database `env` names (DATABASE_URL).
 */
export async function makeCredentials(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<Credentials & { userId: number }> {
  const cli = async (args: string[]): Promise<string> => {
    const lines: string[] = [];
    await runCli(args, { env: { DATA_DIR: dataDir, ...env }, stdout: (l) => lines.push(l), readStdin: async () => '' });
    return lines.join('\n');
  };
  const userId = Number(await cli(['user', 'add', 'bench']));
  const token = await cli(['token', 'create', '--user', 'bench', '--scopes', 'read,write', '--label', 'bench']);
  const limitedToken = await cli([
    'token',
    'create',
    '--user',
    'bench',
    '--scopes',
    'read,write',
    '--rate',
    '10000000',
    '--label',
    'bench-limited',
  ]);
  return { userId, token, limitedToken };
}

/**
 * Writes `count` public pastes of 200 B–4 KB (plus, if `bigBytes` > 0, one paste of that
 * size, and if `imageBytes` > 0, one holding a PNG of that size) into `dataDir` through
 * PasteService.create, `concurrency` at a time.
 */
export async function seedPastes(
  dataDir: string,
  ownerId: number,
  count: number,
  opts: { bigBytes?: number; imageBytes?: number; concurrency?: number; seed?: number; pages?: boolean } = {},
): Promise<Seeded> {
  const files = new SeedFiles(join(dataDir, 'tmp'));
  await files.init();
  const state = join(dataDir, 'state');
  await files.ensureDir(state);
  // A zero-byte cache keeps the seeding process small: nothing is ever cached.
  const store = new PasteStore(dataDir, files, 0);
  await store.init();
  const owners = new SeedOwners(dataDir, files);
  await owners.init();
  const recent = new RecentPastes(files, join(state, 'recent.json'));
  const views = new ViewCounter(store, files, join(state, 'views.json'));
  const budget = new FailureBudget(new RateLimiter(Date.now));
  // The file's bytes go where the server keeps them, with the paste's claim (store/file-bytes.ts).
  const bytes = new ClaimedFiles(new DiskFileClaims(dataDir, files), new DiskFileBlobs(dataDir, files));
  const service = new PasteService({
    store,
    views,
    owners,
    recent,
    budget,
    now: Date.now,
    files: { bytes, limits: FILE_LIMIT_DEFAULTS },
  });

  const rand = prng(opts.seed ?? 42);
  const sizes = Array.from({ length: count }, () => 200 + Math.floor(rand() * 3897));
  const hashes: string[] = new Array<string>(count);
  const input = (content: string, title: string): CreateInput => ({
    title,
    content,
    language: 'text',
    privacy: 'public',
    expiry: 'never',
    password: null,
    highlight: 1,
    burn_after_read: 0,
  });

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const p = await service.create(input(textOfSize(sizes[i] as number, prng(i)), `bench paste ${i}`), ownerId);
      hashes[i] = p.hash;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 64 }, worker));

  let big: Seeded['big'] = null;
  if (opts.bigBytes !== undefined && opts.bigBytes > 0) {
    const p = await service.create(input(textOfSize(opts.bigBytes, rand), 'bench big paste'), ownerId);
    big = { hash: p.hash, bytes: opts.bigBytes };
  }
  let image: Seeded['image'] = null;
  if (opts.imageBytes !== undefined && opts.imageBytes > 0) {
    const png = benchPng(opts.imageBytes);
    const sha256 = createHash('sha256').update(png).digest('hex');
    const path = join(dataDir, 'tmp', 'bench-image.png');
    await writeFile(path, png);
    const file = { name: IMAGE_NAME, size: png.length, type: 'image/png', sha256, path };
    const p = await service.create(input('', 'bench image'), ownerId, undefined, undefined, [file]);
    image = { hash: p.hash, name: IMAGE_NAME, bytes: png.length, sha256 };
  }
  let web: Seeded['web'] = null;
  if (opts.pages === true) {
    const page = (over: Partial<CreateInput>): Promise<string> =>
      service
        .create({ ...input(PAGE_TEXT, 'bench page'), language: 'javascript', ...over }, ownerId)
        .then((p) => p.hash);
    web = {
      page: await page({}),
      burn: await page({ burn_after_read: 1 }),
      locked: await page({ password: PAGE_PASSWORD }),
      markdown: await page({ language: 'markdown', content: MARKDOWN_TEXT }),
    };
  }
  await writeFile(join(dataDir, 'owners', `${ownerId}.log`), owners.lines.join(''), { mode: 0o600, flag: 'a' });
  await recent.save();
  return { hashes, sizes, big, web, image };
}
