import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANONYMOUS_OWNER } from '../paste/anonymous.ts';
import { type FileBytes, filesOf, type PasteFile, recordOf } from '../paste/files.ts';
import type { OwnerLists, PasteRepository } from '../paste/repository.ts';
import type { Accounts } from '../auth/accounts.ts';
import type { Actor } from '../log/audit.ts';
import { contentOf, HASH_RE, type Paste } from '../paste/paste.ts';
import { DamagedRecord, pasteOf } from '../paste/record.ts';
import { passwordHashProblem } from '../crypto/passwords.ts';
import { isLanguage } from '../paste/language.ts';
import { hasLoneSurrogate, titleProblem } from '../paste/validate.ts';

/**
 * One paste as `cli export` writes it and `cli import` reads it (README, Export and
 * import): one JSON object a line, times as ISO 8601 strings, the owner by name, the
 * password as its salted hash, the view count with the views not yet folded into the file.
 * Independent of how pastes are stored, so it also carries them across a change of storage.
 */
export interface ExportedPaste {
  v: 1;
  hash: string;
  title: string;
  content: string;
  language: string;
  privacy: Paste['privacy'];
  highlight: 0 | 1;
  burn_after_read: 0 | 1;
  burned: boolean;
  password: string | null;
  /** The owner's name; null for an anonymous paste (paste/anonymous.ts). */
  owner: string | null;
  created_at: string;
  updated_at: string;
  expire_at: string | null;
  view_count: number;
  revision: number;
  receipt: { at: string; via: 'web' | 'api'; token_id: string | null } | null;
  /** An anonymous paste's delete key, as the digest it is kept as, so its link still works after a move. */
  delete_key?: string;
  /** 1: the content is a client's envelope (README, Encrypted pastes); absent in older exports. */
  encrypted?: 0 | 1;
  /** The paste's files; their bytes come on `file` lines before the first paste that names them (docs/files.md). */
  files?: PasteFile[];
}

/** A file's bytes as an export carries them, once per SHA-256, before the first paste line that names them. */
export interface ExportedFile {
  file: { sha256: string; size: number; data: string };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The export line of a stored paste. */
export function exportLine(p: Paste, owner: string | null, viewCount: number): string {
  const line: ExportedPaste = {
    v: 1,
    hash: p.hash,
    title: p.title,
    content: contentOf(p),
    language: p.language,
    privacy: p.privacy,
    highlight: p.highlight,
    burn_after_read: p.burn_after_read,
    burned: p.burned,
    password: p.password,
    owner,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    expire_at: p.expire_at === null ? null : iso(p.expire_at),
    view_count: viewCount,
    revision: p.revision ?? 1,
    receipt:
      p.receipt === null || p.receipt === undefined
        ? null
        : { at: iso(p.receipt.at), via: p.receipt.via, token_id: p.receipt.token_id },
    ...(p.encrypted === 1 ? { encrypted: 1 as const } : {}),
    ...(filesOf(p).length > 0 ? { files: filesOf(p).map(recordOf) } : {}),
  };
  if (p.delete_key !== undefined) line.delete_key = p.delete_key;
  return JSON.stringify(line);
}

/**
 * The `file` lines paste `p` needs before its own: the bytes of each of its files that no
 * earlier line of this export carried (`written` keeps their hashes). Bytes the store no
 * longer has are left out, and named in `missing`: the import refuses the paste then.
 */
export async function fileLines(
  p: Paste,
  bytes: Pick<FileBytes, 'open'>,
  written: Set<string>,
  missing: (f: PasteFile) => void,
): Promise<string[]> {
  const lines: string[] = [];
  for (const f of filesOf(p)) {
    if (written.has(f.sha256)) continue;
    const stored = await bytes.open(f.sha256);
    if (stored === null) {
      missing(f);
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const c of stored.stream()) chunks.push(c as Buffer);
    const data = Buffer.concat(chunks);
    const line: ExportedFile = { file: { sha256: f.sha256, size: data.length, data: data.toString('base64') } };
    lines.push(JSON.stringify(line));
    written.add(f.sha256);
  }
  return lines;
}

/** A line `cli import` cannot take; the message says which field and why. */
export class ImportError extends Error {}

const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z$/;
/** The largest count a paste's views can reach and still be counted exactly. */
const MAX_VIEW_COUNT = Number.MAX_SAFE_INTEGER;
/** The largest revision number both backends hold (a PostgreSQL integer). */
const MAX_REVISION = 2 ** 31 - 1;
const TOKEN_ID_RE = /^[A-Za-z0-9]{8}$/;

function time(value: unknown, name: string): number {
  if (typeof value !== 'string' || !ISO_RE.test(value) || Number.isNaN(Date.parse(value)))
    throw new ImportError(`"${name}" must be a UTC time like 2026-01-31T14:30:00.000Z`);
  // PostgreSQL has no year 0000 (1 BC).
  if (value.startsWith('0000')) throw new ImportError(`"${name}" must be a time in the years 0001 to 9999`);
  return Date.parse(value);
}

/**
 * An export line as a paste (its `owner_id` 0 until the owner is found), every field checked
 * as the store checks its files and, beyond that, as a create would (README, Export and
 * import): a title and text within the limits, a password only as the salted hash an
 * export writes, and no text left in a burned paste.
 */
export function parseExportLine(line: string, maxBytes: number): { paste: Paste; owner: string | null } {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new ImportError('not a JSON object');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new ImportError('not a JSON object');
  if (o['v'] !== 1) throw new ImportError('"v" must be 1 (a line written by a newer version?)');
  const owner = o['owner'];
  if (owner !== null && (typeof owner !== 'string' || owner === ''))
    throw new ImportError('"owner" must be a user name, or null for an anonymous paste');
  // An encrypted paste's language may be left to its readers (`auto`, README, Encrypted pastes).
  const readersDetect = o['language'] === 'auto' && o['encrypted'] === 1;
  if (typeof o['language'] !== 'string' || !(isLanguage(o['language']) || readersDetect))
    throw new ImportError('"language" is not a language this service knows');
  const r = o['receipt'] as Record<string, unknown> | null | undefined;
  const record = {
    ...o,
    owner_id: 0,
    created_at: time(o['created_at'], 'created_at'),
    updated_at: time(o['updated_at'], 'updated_at'),
    expire_at: o['expire_at'] === null ? null : time(o['expire_at'], 'expire_at'),
    receipt: r === null || r === undefined ? null : { ...r, at: time(r['at'], 'receipt.at') },
  };
  delete (record as Record<string, unknown>)['owner'];
  delete (record as Record<string, unknown>)['v'];
  // Only an anonymous paste has a delete key.
  if (owner !== null) delete (record as Record<string, unknown>)['delete_key'];
  // An empty list is no list, as a stored paste without files has none.
  if (Array.isArray(o['files']) && o['files'].length === 0) delete (record as Record<string, unknown>)['files'];
  // The check of a stored paste's fields (paste/record.ts) decides the rest, on the fields
  // read back from JSON text as a stored file's are.
  let paste: Paste;
  try {
    paste = pasteOf(JSON.parse(JSON.stringify(record)));
  } catch (err) {
    if (err instanceof DamagedRecord)
      throw new ImportError(err.reason.replace('the record is malformed: ', 'a field is missing or wrong: '));
    throw err;
  }
  checkLimits(paste, maxBytes);
  checkRanges(paste);
  return { paste, owner };
}

/**
 * Numbers and ids every backend can store as they are: a line one backend would take and the
 * other could not is refused on both, by its number, and the rest imported.
 */
function checkRanges(p: Paste): void {
  if (p.view_count > MAX_VIEW_COUNT)
    throw new ImportError(`"view_count" must be a whole number from 0 to ${MAX_VIEW_COUNT}`);
  if ((p.revision ?? 1) > MAX_REVISION)
    throw new ImportError(`"revision" must be a whole number from 1 to ${MAX_REVISION}`);
  const tokenId = p.receipt?.token_id ?? null;
  if (tokenId !== null && !TOKEN_ID_RE.test(tokenId))
    throw new ImportError('"receipt.token_id" must be a token id (8 letters and digits) or null');
}

/** What a create would refuse, and what no export writes. */
function checkLimits(p: Paste, maxBytes: number): void {
  const title = titleProblem(p.title);
  if (title !== null) throw new ImportError(`"title": ${title}`);
  const text = contentOf(p);
  if (hasLoneSurrogate(p.title) || hasLoneSurrogate(text))
    throw new ImportError('"title" and "content" must be valid Unicode text (one holds half of a surrogate pair)');
  const hashProblem = p.password === null ? null : passwordHashProblem(p.password);
  if (hashProblem?.kind === 'shape')
    throw new ImportError(
      '"password" must be the salted hash an export writes (scrypt$...), never a password in clear',
    );
  // Checking a password against such a hash could take minutes of a shared thread, or fail outright.
  if (hashProblem !== null) throw new ImportError(`"password" has ${hashProblem.message}`);
  if (p.burned && text !== '')
    throw new ImportError('"content" must be empty in a burned paste: its text was wiped when it was read');
  // A tombstone (burned, or wiped at its expiry, which came before its last change) has no
  // text; any other paste has some.
  const wiped = p.burned || (p.expire_at !== null && p.expire_at <= p.updated_at);
  if (!wiped && text === '' && filesOf(p).length === 0) throw new ImportError('"content" must not be empty');
  const names = filesOf(p).map((f) => f.name);
  if (new Set(names).size !== names.length) throw new ImportError('"files": two files of one paste share a name');
  if (Buffer.byteLength(text, 'utf8') > maxBytes)
    throw new ImportError(`"content" exceeds ${maxBytes} bytes (MAX_PASTE_BYTES)`);
}

export interface ImportReport {
  imported: number;
  /** Taken hashes and the new ones their pastes got. */
  renamed: [string, string][];
  /** Lines whose paste is already here, identical (an import run twice). */
  unchanged: number;
  /** Users made for owners this instance did not have (no password: `user passwd` sets one). */
  usersAdded: string[];
  /** Line numbers (from 1) and what is wrong with them. */
  refused: [number, string][];
}

export interface ImportDeps {
  /** The largest text a line may carry (MAX_PASTE_BYTES), as for a create. */
  maxPasteBytes: number;
  store: Pick<PasteRepository, 'get' | 'create'>;
  owners: OwnerLists;
  accounts: Accounts;
  actor: Actor;
  /** Where files' bytes are stored; `file` lines are spooled to its tmpDir until their pastes take them. */
  files: FileBytes;
  now: () => number;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A line's bytes as text, or null when they are not UTF-8 (never U+FFFD in their place). */
function utf8(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
    return null;
  }
}

/**
 * Imports export lines, as text or (from standard input) as each line's bytes. A paste
 * keeps its hash unless another paste here has it (or its short code): then it gets a new
 * one and the report says so. The same paste imported again (same hash, creation time and
 * content) is left as it is.
 */
export async function importPastes(
  lines: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  deps: ImportDeps,
): Promise<ImportReport> {
  const report: ImportReport = { imported: 0, renamed: [], unchanged: 0, usersAdded: [], refused: [] };
  let n = 0;
  const bytesIn = new IncomingBytes(deps);
  try {
    for await (const raw of lines) {
      n++;
      const text = typeof raw === 'string' ? raw : utf8(raw);
      if (text === null) {
        report.refused.push([n, 'not valid UTF-8 (as the API refuses such a body)']);
        continue;
      }
      const line = text.trim();
      if (line === '') continue;
      if (line.startsWith('{"file":')) {
        const problem = await bytesIn.take(line, n);
        if (problem !== null) report.refused.push([n, problem]);
        continue;
      }
      let parsed: ReturnType<typeof parseExportLine>;
      try {
        parsed = parseExportLine(line, deps.maxPasteBytes);
      } catch (err) {
        if (!(err instanceof ImportError)) throw err;
        report.refused.push([n, err.message]);
        continue;
      }
      const { paste, owner } = parsed;
      const lacking = bytesIn.lacking(paste);
      if (lacking !== null) {
        report.refused.push([n, lacking]);
        continue;
      }
      // An anonymous paste (owner null) has no user to find or make.
      let user = owner === null ? null : deps.accounts.userByName(owner);
      if (user === undefined && owner !== null) {
        try {
          user = await deps.accounts.addUser(owner, 'user', null, deps.actor);
        } catch (err) {
          report.refused.push([
            n,
            `owner "${owner}" cannot be a user here: ${err instanceof Error ? err.message : String(err)}`,
          ]);
          continue;
        }
        report.usersAdded.push(user.name);
      }
      const ownerId = user === null || user === undefined ? ANONYMOUS_OWNER : user.id;
      const here = HASH_RE.test(paste.hash) ? await deps.store.get(paste.hash).catch(() => null) : null;
      if (
        here !== null &&
        here.created_at === paste.created_at &&
        here.content_json === paste.content_json &&
        here.owner_id === ownerId
      ) {
        report.unchanged++;
        continue;
      }
      // The bytes and the paste's claim on them are stored before its record names them, as a create does.
      await bytesIn.keep(paste, paste.hash);
      const stored = await deps.store.create(
        // Spread, then overridden: the fields keep the order parseFile gave them.
        (hash) => ({ ...paste, hash, owner_id: ownerId }),
        // An anonymous paste is on no owner's list.
        ownerId === ANONYMOUS_OWNER
          ? undefined
          : { add: (p) => deps.owners.add(ownerId, p.hash), withdraw: (p) => deps.owners.remove(ownerId, p.hash) },
        paste.hash,
      );
      if (stored.hash !== paste.hash) await bytesIn.keep(paste, stored.hash);
      report.imported++;
      if (stored.hash !== paste.hash) report.renamed.push([paste.hash, stored.hash]);
    }
  } finally {
    await bytesIn.close();
  }
  return report;
}

/**
 * The `file` lines of an import: each one's bytes checked against its SHA-256 and size, then
 * spooled to the store's tmpDir until the end of the import; each paste that names them
 * stores a copy with its claim (FileBytes.keep takes the spooled file it is given).
 */
class IncomingBytes {
  readonly #spooled = new Map<string, { path: string; size: number }>();
  /** Hashes whose line was refused, with its number. */
  readonly #bad = new Map<string, number>();

  constructor(private readonly deps: Pick<ImportDeps, 'files' | 'now'>) {}

  /** Reads a `file` line; answers why it is refused, or null. */
  async take(line: string, n: number): Promise<string | null> {
    let f: Record<string, unknown> | undefined;
    try {
      f = (JSON.parse(line) as { file?: Record<string, unknown> }).file;
    } catch {
      return 'not a JSON object';
    }
    const sha = f?.['sha256'];
    if (typeof sha !== 'string' || !/^[0-9a-f]{64}$/.test(sha))
      return '"file.sha256" must be 64 lowercase hexadecimal digits';
    const fail = (why: string): string => {
      this.#bad.set(sha, n);
      return why;
    };
    if (typeof f?.['data'] !== 'string' || !BASE64_RE.test(f['data']))
      return fail(`file ${sha}: "data" must be base64`);
    if (this.#spooled.has(sha)) return null;
    const bytes = Buffer.from(f['data'], 'base64');
    if (bytes.length !== f['size'])
      return fail(`file ${sha}: its data is ${bytes.length} bytes, not the ${String(f['size'])} its "size" says`);
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha) return fail(`file ${sha}: its data does not match its SHA-256 (it hashes to ${actual})`);
    this.#bad.delete(sha);
    const path = join(this.deps.files.tmpDir, `upload-import-${randomBytes(8).toString('hex')}`);
    await mkdir(this.deps.files.tmpDir, { recursive: true });
    await writeFile(path, bytes, { mode: 0o600 });
    this.#spooled.set(sha, { path, size: bytes.length });
    return null;
  }

  /** Why paste `p` cannot be imported for want of its files' bytes, or null. */
  lacking(p: Paste): string | null {
    for (const f of filesOf(p)) {
      const bad = this.#bad.get(f.sha256);
      if (bad !== undefined) return `file "${f.name}" (${f.sha256}): its bytes on line ${bad} were refused`;
      const got = this.#spooled.get(f.sha256);
      if (got === undefined) return `file "${f.name}" (${f.sha256}): no earlier line carries its bytes`;
      if (got.size !== f.size) return `file "${f.name}": "size" says ${f.size} bytes, its bytes are ${got.size}`;
    }
    return null;
  }

  /** Stores a copy of each of `p`'s files, with `holder`'s claim on it. */
  async keep(p: Paste, holder: string): Promise<void> {
    for (const f of filesOf(p)) {
      const from = this.#spooled.get(f.sha256);
      if (from === undefined) continue;
      const path = `${from.path}-${randomBytes(4).toString('hex')}`;
      await copyFile(from.path, path);
      await this.deps.files.keep({ ...recordOf(f), path }, holder, this.deps.now());
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#spooled.values()].map((s) => rm(s.path, { force: true })));
  }
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
