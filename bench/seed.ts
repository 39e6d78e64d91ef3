import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCli } from '../src/cli.ts';
import { PasteService } from '../src/paste/service.ts';
import { RateLimiter } from '../src/ratelimit/bucket.ts';
import { FailureBudget } from '../src/ratelimit/failure-budget.ts';
import type { CreateInput } from '../src/paste/validate.ts';
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
 * size) into `dataDir` through PasteService.create, `concurrency` at a time.
 */
export async function seedPastes(
  dataDir: string,
  ownerId: number,
  count: number,
  opts: { bigBytes?: number; concurrency?: number; seed?: number; pages?: boolean } = {},
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
  const service = new PasteService({ store, views, owners, recent, budget, now: Date.now });

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
  return { hashes, sizes, big, web };
}
