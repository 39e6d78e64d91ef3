import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { byFd, fsyncDir, isErrno } from './files.ts';

/**
 * The backup archive (README, Backup and restore): a POSIX ustar tar, gzip-compressed,
 * written and read here with node:zlib alone. `tar -tzf` lists it and `tar -xzf` unpacks
 * it. Its last member is `MANIFEST.json`: every other member's path, size and SHA-256,
 * checked on reading, so a damaged or altered archive is refused before anything is used.
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

  async #member(name: string, data: Buffer, mtimeMs: number): Promise<void> {
    await this.#write(header(name, data.length, mtimeMs));
    await this.#write(data);
    await this.#write(Buffer.alloc(paddingOf(data.length)));
  }

  /** Adds one regular file; its size and SHA-256 go into the manifest. */
  async add(name: string, data: Buffer, mtimeMs: number): Promise<void> {
    const wrong = checkName(name);
    if (wrong !== null) throw new Error(`${name}: ${wrong}`);
    if (this.#names.has(name) || name === MANIFEST_NAME) throw new Error(`${name}: already in the archive`);
    await this.#member(name, data, mtimeMs);
    this.#names.add(name);
    this.#files.push({ path: name, size: data.length, sha256: sha256(data) });
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
    await this.#member(MANIFEST_NAME, Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`), Date.now());
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

/** The gunzipped bytes not yet parsed, as a list of chunks so that taking from the front never copies the rest. */
class ByteQueue {
  #chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `n` bytes (n ≤ length) as a buffer of their own. */
  take(n: number): Buffer {
    const parts: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const chunk = this.#chunks[0] as Buffer;
      if (chunk.length <= need) {
        parts.push(chunk);
        this.#chunks.shift();
        need -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, need));
        this.#chunks[0] = chunk.subarray(need);
        need = 0;
      }
    }
    this.length -= n;
    // concat copies even a single part: the caller may keep the data without pinning a whole chunk.
    return Buffer.concat(parts, n);
  }
}

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

/** Checks the members read against the manifest: each listed once, same size and SHA-256, nothing else. */
function checkAgainst(manifest: Manifest, seen: Map<string, ManifestEntry>): void {
  const listed = new Set<string>();
  for (const f of manifest.files) {
    if (listed.has(f.path)) throw new ArchiveError(`${f.path} is in the manifest twice`);
    listed.add(f.path);
    const got = seen.get(f.path);
    if (got === undefined) throw new ArchiveError(`${f.path} is in the manifest but not in the archive`);
    if (got.size !== f.size)
      throw new ArchiveError(`${f.path} does not match the manifest (size ${got.size}, listed ${f.size})`);
    if (got.sha256 !== f.sha256) throw new ArchiveError(`${f.path} does not match the manifest (SHA-256 differs)`);
  }
  for (const name of seen.keys())
    if (!listed.has(name)) throw new ArchiveError(`${name} is in the archive but not in the manifest`);
}

/**
 * Reads an archive as a stream: calls `onFile` for each regular file but the manifest, in
 * order (each file's bytes are held whole, never the archive), then checks the manifest:
 * present and last, naming every file once with its size and SHA-256, and nothing else.
 */
export async function readArchive(
  path: string,
  onFile: (name: string, data: Buffer) => Promise<void>,
): Promise<Manifest> {
  const seen = new Map<string, ManifestEntry>();
  let manifest: Manifest | null = null;
  let ended = false;
  const queue = new ByteQueue();
  const input = createGunzip();
  // pipeline (unlike pipe) brings a read error (no such file) to the loop below.
  pipeline(createReadStream(path), input).catch(() => undefined);
  try {
    let member: Member | null = null; // Between a header and the end of its data.
    for await (const chunk of input as AsyncIterable<Buffer>) {
      // After the end blocks the rest is still read, so that gunzip checks its CRC, but not kept.
      if (ended) continue;
      queue.push(chunk);
      while (!ended) {
        if (member === null) {
          if (queue.length < BLOCK) break;
          const h = queue.take(BLOCK);
          if (h.every((b) => b === 0)) ended = true;
          else member = parseHeader(h);
          continue;
        }
        if (queue.length < member.size + paddingOf(member.size)) break;
        const data = queue.take(member.size);
        queue.take(paddingOf(member.size));
        const { name, type } = member;
        member = null;
        if (type === '5') continue; // A folder entry (from another tar): folders come from file paths.
        if (type !== '0' && type !== '\0') throw new ArchiveError(`${name} is not a regular file (tar type '${type}')`);
        if (manifest !== null) throw new ArchiveError(`${name} comes after ${MANIFEST_NAME}, which must be last`);
        const wrong = checkName(name);
        if (wrong !== null) throw new ArchiveError(`member "${name}" is ${wrong}`);
        if (name === MANIFEST_NAME) {
          manifest = parseManifest(data);
          continue;
        }
        if (seen.has(name)) throw new ArchiveError(`${name} is in the archive twice`);
        seen.set(name, { path: name, size: data.length, sha256: sha256(data) });
        await onFile(name, data);
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
  if (manifest === null) throw new ArchiveError(`it has no ${MANIFEST_NAME}: not a backup of this service`);
  checkAgainst(manifest, seen);
  return manifest;
}
