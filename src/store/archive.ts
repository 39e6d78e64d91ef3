import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { byFd, fsyncDir } from '../storage/fs.ts';
import { isErrno } from '../storage/errors.ts';

/**
 * The backup archive (README, Backup and restore): a POSIX ustar tar, gzip-compressed,
 * written and read here with node:zlib alone. `tar -tzf` lists it and `tar -xzf` unpacks
 * it. Its last member is `MANIFEST.json`: every other member's path, size and SHA-256,
 * checked on reading, so a damaged or cut archive is refused before anything is used. It
 * proves integrity, not origin: whoever alters a member can rewrite the manifest to match.
 */
export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: 'pastebin-backup';
  version: 1;
  created_at: string;
  files: ManifestEntry[];
  [extra: string]: unknown;
}

/** Anything wrong with an archive being read; the message says what, in one line. */
export class ArchiveError extends Error {}

export const MANIFEST_NAME = 'MANIFEST.json';
const BLOCK = 512;
const MANIFEST_KEYS = new Set(['format', 'version', 'created_at', 'files']);

/** Why `name` is not a member name we write or accept (relative, `/`-separated, no `..`, NUL or backslash), or null. */
function checkName(name: string): string | null {
  if (name === '' || name.startsWith('/') || name.includes('\\') || name.includes('\0')) return 'not a relative path';
  if (name.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'not a plain path';
  return null;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Bytes of zero padding that round `size` up to whole blocks. */
const paddingOf = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

// ---- Writing ----

/** Writes `value` as a NUL-terminated octal number filling `width` bytes. */
function octal(header: Buffer, offset: number, width: number, value: number, what: string): void {
  const digits = value.toString(8).padStart(width - 1, '0');
  // Header.write would silently cut a number that does not fit, leaving a wrong header.
  if (digits.length > width - 1) throw new Error(`${what} ${value} is too large for a tar header`);
  header.write(`${digits}\0`, offset, width, 'ascii');
}

/** Sum of the header's bytes with the checksum field counted as spaces, as ustar defines it. */
function checksumOf(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] as number);
  return sum;
}

/** Splits a name over 100 bytes into ustar's prefix (≤ 155) and name (≤ 100) at a '/'. */
function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  // The first '/' that leaves at most 100 bytes after it gives the shortest prefix.
  for (let at = name.indexOf('/'); at > 0; at = name.indexOf('/', at + 1)) {
    const base = name.slice(at + 1);
    if (Buffer.byteLength(base) > 100) continue;
    const prefix = name.slice(0, at);
    if (Buffer.byteLength(prefix) <= 155) return { prefix, base };
    break;
  }
  throw new Error(`${name}: too long for a ustar member name`);
}

/** The ustar header of a regular file, mode 0600, owned by root. */
function header(name: string, size: number, mtimeMs: number): Buffer {
  const { prefix, base } = splitName(name);
  const h = Buffer.alloc(BLOCK);
  h.write(base, 0, 100, 'utf8');
  octal(h, 100, 8, 0o600, 'mode');
  octal(h, 108, 8, 0, 'uid');
  octal(h, 116, 8, 0, 'gid');
  octal(h, 124, 12, size, 'size');
  octal(h, 136, 12, Math.max(0, Math.floor(mtimeMs / 1000)), 'mtime');
  h.write('0', 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  h.write(`${checksumOf(h).toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/**
 * Writes an archive to `<path>.part`, then fsyncs it and renames it into place, so a crash
 * never leaves a half archive under the real name.
 */
export class ArchiveWriter {
  readonly #files: ManifestEntry[] = [];
  readonly #names = new Set<string>();
  readonly #path: string;
  readonly #gzip: Gzip;
  /** Settles when the gzip stream has been written and the file closed, or on the first error of either. */
  readonly #done: Promise<void>;

  private constructor(path: string, gzip: Gzip, done: Promise<void>) {
    this.#path = path;
    this.#gzip = gzip;
    this.#done = done;
  }

  static async create(path: string): Promise<ArchiveWriter> {
    const out = createWriteStream(`${path}.part`, { flags: 'w', mode: 0o600 });
    try {
      await once(out, 'open');
    } catch (err) {
      // The archive's folder is missing: say so, rather than name a `.part` file nobody asked for.
      if (isErrno(err, 'ENOENT')) throw new ArchiveError(`${dirname(path)} does not exist: create the folder first`);
      throw err;
    }
    const gzip = createGzip();
    // pipeline (unlike pipe) passes a write error (a full disk) back to the gzip side,
    // so a waiting add() fails instead of waiting for a drain that never comes.
    const done = pipeline(gzip, out);
    done.catch(() => undefined); // Awaited by finish and #write; abort drops it.
    return new ArchiveWriter(path, gzip, done);
  }

  async #write(data: Buffer): Promise<void> {
    if (!this.#gzip.write(data)) await Promise.race([once(this.#gzip, 'drain'), this.#done]);
  }

  /** Writes one member: its header, exactly `size` bytes from `source`, and the padding; answers their SHA-256. */
  async #member(name: string, size: number, source: Iterable<Buffer> | AsyncIterable<Buffer>, mtimeMs: number) {
    await this.#write(header(name, size, mtimeMs));
    const hash = createHash('sha256');
    let left = size;
    for await (const chunk of source) {
      if (chunk.length > left) throw new Error(`${name}: more than the ${size} bytes its header declares`);
      hash.update(chunk);
      await this.#write(chunk);
      left -= chunk.length;
    }
    // The header is written: a short member would shift every later one.
    if (left > 0)
      throw new Error(`${name}: ${left} bytes short of the ${size} its header declares (changed while read?)`);
    await this.#write(Buffer.alloc(paddingOf(size)));
    return hash.digest('hex');
  }

  /** Adds one regular file held in memory; its size and SHA-256 go into the manifest. */
  add(name: string, data: Buffer, mtimeMs: number): Promise<void> {
    return this.addStream(name, data.length, [data], mtimeMs);
  }

  /**
   * Adds one regular file of `size` bytes read from `source` a chunk at a time (a log of
   * any size is never held whole); the SHA-256 is computed on the way.
   */
  async addStream(
    name: string,
    size: number,
    source: Iterable<Buffer> | AsyncIterable<Buffer>,
    mtimeMs: number,
  ): Promise<void> {
    const wrong = checkName(name);
    if (wrong !== null) throw new Error(`${name}: ${wrong}`);
    if (this.#names.has(name) || name === MANIFEST_NAME) throw new Error(`${name}: already in the archive`);
    const digest = await this.#member(name, size, source, mtimeMs);
    this.#names.add(name);
    this.#files.push({ path: name, size, sha256: digest });
  }

  /** Appends the manifest and the end-of-archive blocks, then makes the file durable under its real name. */
  async finish(extra: Record<string, unknown> = {}): Promise<Manifest> {
    const clash = Object.keys(extra).find((k) => MANIFEST_KEYS.has(k));
    if (clash !== undefined) throw new Error(`manifest field ${clash} cannot be set by the caller`);
    // files last: the short fields stay readable at the top of a long manifest.
    const manifest: Manifest = {
      format: 'pastebin-backup',
      version: 1,
      created_at: new Date().toISOString(),
      ...extra,
      files: this.#files,
    };
    const text = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`);
    await this.#member(MANIFEST_NAME, text.length, [text], Date.now());
    await this.#write(Buffer.alloc(2 * BLOCK));
    this.#gzip.end();
    await this.#done; // pipeline settles only after the file stream has closed.
    const part = `${this.#path}.part`;
    const fd = await byFd.open(part, 'r');
    try {
      await byFd.sync(fd);
    } finally {
      await byFd.close(fd);
    }
    await rename(part, this.#path);
    await fsyncDir(dirname(this.#path)).catch((err: unknown) => {
      // Some platforms cannot fsync a folder; the rename is then as durable as they allow.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'EINVAL') throw err;
    });
    return manifest;
  }

  /** Stops writing and removes the `.part` file. */
  async abort(): Promise<void> {
    this.#gzip.destroy();
    await this.#done.catch(() => undefined);
    await unlink(`${this.#path}.part`).catch(() => undefined);
  }
}

// ---- Reading ----

/** Where one member's bytes go while it is read: each chunk in order, then `end`. */
export interface MemberSink {
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
}

/** What an archive's first reading found: its manifest, checked against every member's name and size. */
export interface Scanned {
  manifest: Manifest;
  /** The SHA-256 of MANIFEST.json, so the second reading knows it reads the same archive. */
  manifestSha256: string;
}

/** The largest MANIFEST.json read: about two million files' entries. */
const MANIFEST_MAX = 256 * 1024 * 1024;

/** A header's string field: up to its first NUL. */
function text(h: Buffer, offset: number, width: number): string {
  const field = h.subarray(offset, offset + width);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? width : end).toString('utf8');
}

function parseOctal(h: Buffer, offset: number, width: number, what: string): number {
  const s = text(h, offset, width).trim();
  if (!/^[0-7]+$/.test(s)) throw new ArchiveError(`a member header has a bad ${what} field`);
  return parseInt(s, 8);
}

interface Member {
  name: string;
  size: number;
  type: string;
}

/** Parses one header block, its checksum verified. */
function parseHeader(h: Buffer): Member {
  if (checksumOf(h) !== parseOctal(h, 148, 8, 'checksum'))
    throw new ArchiveError('a member header is damaged (checksum mismatch)');
  const magic = h.subarray(257, 263).toString('latin1');
  if (!magic.startsWith('ustar')) throw new ArchiveError('a member header is not a ustar header');
  // Only POSIX ustar has a prefix field; GNU's "ustar  " keeps other data there.
  const prefix = magic === 'ustar\0' ? text(h, 345, 155) : '';
  const base = text(h, 0, 100);
  return {
    name: prefix === '' ? base : `${prefix}/${base}`,
    size: parseOctal(h, 124, 12, 'size'),
    type: String.fromCharCode(h[156] as number),
  };
}

/** Whether a member is a regular file (true), a folder entry to pass over (false), or refused. */
function isRegular(m: Member): boolean {
  if (m.type === '5') return false; // A folder entry (from another tar): folders come from file paths.
  if (m.type !== '0' && m.type !== '\0')
    throw new ArchiveError(`${m.name} is not a regular file (tar type '${m.type}')`);
  const wrong = checkName(m.name);
  if (wrong !== null) throw new ArchiveError(`member "${m.name}" is ${wrong}`);
  return true;
}

/**
 * Reads the tar inside the gzip at `path` as a stream: `onHeader` is told each member's
 * header and answers where its bytes go (null: passed over). Only a gunzipped chunk at a
 * time is held, whatever size a member declares; the sink's promises hold the reading back.
 */
async function walk(path: string, onHeader: (m: Member) => Promise<MemberSink | null>): Promise<void> {
  const head: Buffer[] = [];
  let headLength = 0;
  let phase: 'head' | 'data' | 'pad' = 'head';
  let left = 0;
  let pad = 0;
  let sink: MemberSink | null = null;
  let ended = false;
  const input = createGunzip();
  // pipeline (unlike pipe) brings a read error (no such file) to the loop below.
  pipeline(createReadStream(path), input).catch(() => undefined);
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let at = 0;
      // After the end blocks the rest is still read, so that gunzip checks its CRC, but not kept.
      while (!ended) {
        if (phase === 'head') {
          const n = Math.min(BLOCK - headLength, chunk.length - at);
          head.push(chunk.subarray(at, at + n));
          headLength += n;
          at += n;
          if (headLength < BLOCK) break;
          const h = Buffer.concat(head, BLOCK);
          head.length = 0;
          headLength = 0;
          if (h.every((b) => b === 0)) {
            ended = true;
            break;
          }
          const m = parseHeader(h);
          sink = await onHeader(m);
          left = m.size;
          pad = paddingOf(m.size);
          phase = 'data';
        }
        if (phase === 'data') {
          const n = Math.min(left, chunk.length - at);
          if (n > 0 && sink !== null) await sink.write(chunk.subarray(at, at + n));
          left -= n;
          at += n;
          if (left > 0) break;
          await sink?.end();
          sink = null;
          phase = 'pad';
        }
        const n = Math.min(pad, chunk.length - at);
        pad -= n;
        at += n;
        if (pad > 0) break;
        phase = 'head';
      }
    }
  } catch (err) {
    input.destroy();
    if (err instanceof ArchiveError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'Z_STREAM_ERROR')
      throw new ArchiveError('it is not a whole gzip file (cut short or damaged)');
    throw err;
  }
  if (!ended) throw new ArchiveError('the tar ends without its end-of-archive blocks (cut short)');
}

/** The manifest's JSON, its shape checked so that the comparison with the members can trust it. */
function parseManifest(data: Buffer): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw new ArchiveError(`${MANIFEST_NAME} is not valid JSON`);
  }
  const m = value as Partial<Manifest> | null;
  if (
    typeof m !== 'object' ||
    m === null ||
    m.format !== 'pastebin-backup' ||
    m.version !== 1 ||
    typeof m.created_at !== 'string' ||
    !Array.isArray(m.files)
  ) {
    throw new ArchiveError(`${MANIFEST_NAME} is not a manifest this version reads`);
  }
  for (const f of m.files as unknown[]) {
    const e = f as Partial<ManifestEntry> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.path !== 'string' ||
      !Number.isSafeInteger(e.size) ||
      typeof e.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(e.sha256)
    ) {
      throw new ArchiveError(`${MANIFEST_NAME} has a malformed entry: ${JSON.stringify(f)}`);
    }
  }
  return m as Manifest;
}

/** Checks the members' names and sizes against the manifest: each listed once, same size, nothing else. */
function checkAgainst(manifest: Manifest, seen: Map<string, number>): void {
  const listed = new Set<string>();
  for (const f of manifest.files) {
    if (listed.has(f.path)) throw new ArchiveError(`${f.path} is in the manifest twice`);
    listed.add(f.path);
    const size = seen.get(f.path);
    if (size === undefined) throw new ArchiveError(`${f.path} is in the manifest but not in the archive`);
    if (size !== f.size)
      throw new ArchiveError(`${f.path} does not match the manifest (size ${size}, listed ${f.size})`);
  }
  for (const name of seen.keys())
    if (!listed.has(name)) throw new ArchiveError(`${name} is in the archive but not in the manifest`);
}

/**
 * The first of two readings: the whole archive without keeping or writing a byte of any
 * member but the manifest. `check` is told each member's name and declared size at its
 * header (to refuse one larger than it could be before reading it). Answers the manifest,
 * present and last, once every member's name and size agree with it.
 */
export async function scanArchive(path: string, check: (name: string, size: number) => void = () => undefined) {
  const seen = new Map<string, number>();
  let manifestData: Buffer | null = null;
  await walk(path, async (m) => {
    if (!isRegular(m)) return null;
    if (manifestData !== null) throw new ArchiveError(`${m.name} comes after ${MANIFEST_NAME}, which must be last`);
    if (m.name === MANIFEST_NAME) {
      if (m.size > MANIFEST_MAX) throw new ArchiveError(`${MANIFEST_NAME} is ${m.size} bytes, more than it can be`);
      const parts: Buffer[] = [];
      return {
        write: async (chunk) => void parts.push(chunk),
        end: async () => void (manifestData = Buffer.concat(parts)),
      };
    }
    if (seen.has(m.name)) throw new ArchiveError(`${m.name} is in the archive twice`);
    check(m.name, m.size);
    seen.set(m.name, m.size);
    return null;
  });
  if (manifestData === null) throw new ArchiveError(`it has no ${MANIFEST_NAME}: not a backup of this service`);
  const manifest = parseManifest(manifestData);
  checkAgainst(manifest, seen);
  return { manifest, manifestSha256: sha256(manifestData) } satisfies Scanned;
}

/**
 * The second reading: each member's bytes, a chunk at a time, to the sink `open` gives,
 * their SHA-256 computed on the way and compared with the manifest at the member's end.
 * A member the manifest does not list, or of another size, is refused at its header,
 * before `open` is called for it: the archive is not the one scanned.
 */
export async function extractArchive(
  path: string,
  scanned: Scanned,
  open: (name: string, size: number) => Promise<MemberSink>,
): Promise<void> {
  const listed = new Map(scanned.manifest.files.map((f) => [f.path, f]));
  const done = new Set<string>();
  let manifestSeen = false;
  await walk(path, async (m) => {
    if (!isRegular(m)) return null;
    if (manifestSeen) throw new ArchiveError(`${m.name} comes after ${MANIFEST_NAME}, which must be last`);
    const hash = createHash('sha256');
    if (m.name === MANIFEST_NAME) {
      return {
        write: async (chunk) => void hash.update(chunk),
        end: async () => {
          if (hash.digest('hex') !== scanned.manifestSha256)
            throw new ArchiveError(`${MANIFEST_NAME} changed between two readings of the archive`);
          manifestSeen = true;
        },
      };
    }
    const entry = listed.get(m.name);
    if (entry === undefined || done.has(m.name))
      throw new ArchiveError(`${m.name} is in the archive but not in the manifest`);
    if (entry.size !== m.size)
      throw new ArchiveError(`${m.name} does not match the manifest (size ${m.size}, listed ${entry.size})`);
    done.add(m.name);
    const out = await open(m.name, m.size);
    return {
      write: async (chunk) => {
        hash.update(chunk);
        await out.write(chunk);
      },
      end: async () => {
        await out.end();
        if (hash.digest('hex') !== entry.sha256)
          throw new ArchiveError(`${m.name} does not match the manifest (SHA-256 differs)`);
      },
    };
  });
  if (!manifestSeen) throw new ArchiveError(`it has no ${MANIFEST_NAME}: not a backup of this service`);
  for (const f of scanned.manifest.files)
    if (!done.has(f.path)) throw new ArchiveError(`${f.path} is in the manifest but not in the archive`);
}

/** Both readings: the manifest checked first, then every member to the sink `open` gives. */
export async function readArchive(
  path: string,
  open: (name: string, size: number) => Promise<MemberSink>,
  check?: (name: string, size: number) => void,
): Promise<Manifest> {
  const scanned = await scanArchive(path, check);
  await extractArchive(path, scanned, open);
  return scanned.manifest;
}
