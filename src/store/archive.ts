import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { byFd, fsyncDir } from './files.ts';

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

/** An archive that cannot be read as a whole, matching backup. */
export class ArchiveError extends Error {}

export const MANIFEST_NAME = 'MANIFEST.json';
const BLOCK = 512;

/** A member name we write and accept: relative, `/`-separated, no `..`, no NUL or backslash. */
function checkName(name: string): string | null {
  if (name === '' || name.startsWith('/') || name.includes('\\') || name.includes('\0')) return 'not a relative path';
  if (name.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'not a plain path';
  return null;
}

/** Writes `value` as a NUL-terminated octal number filling `width` bytes. */
function octal(header: Buffer, offset: number, width: number, value: number): void {
  header.write(`${value.toString(8).padStart(width - 1, '0')}\0`, offset, width, 'ascii');
}

/** The ustar header of a regular file. Names over 100 bytes are split into prefix and name at a '/'. */
function header(name: string, size: number, mtimeMs: number): Buffer {
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    // The first '/' that leaves a name of at most 100 bytes; the prefix must then fit 155.
    let at = name.indexOf('/');
    while (at !== -1 && Buffer.byteLength(name.slice(at + 1)) > 100) at = name.indexOf('/', at + 1);
    prefix = at === -1 ? name : name.slice(0, at);
    base = at === -1 ? '' : name.slice(at + 1);
    if (at <= 0 || Buffer.byteLength(prefix) > 155) throw new Error(`${name}: too long for a tar member name`);
  }
  const h = Buffer.alloc(BLOCK);
  h.write(base, 0, 100, 'utf8');
  octal(h, 100, 8, 0o600);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, Math.floor(mtimeMs / 1000));
  h.fill(0x20, 148, 156); // The checksum counts its own field as spaces.
  h.write('0', 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/**
 * Writes an archive to `<path>.part`, then fsyncs it and renames it into place, so a crash
 * never leaves a half archive under the real name.
 */
export class ArchiveWriter {
  readonly #files: ManifestEntry[] = [];
  readonly #names = new Set<string>();

  private constructor(
    private readonly path: string,
    private readonly gzip: Gzip,
    private readonly out: WriteStream,
  ) {}

  static async create(path: string): Promise<ArchiveWriter> {
    const out = createWriteStream(`${path}.part`, { flags: 'w', mode: 0o600 });
    await once(out, 'open');
    const gzip = createGzip();
    gzip.pipe(out);
    return new ArchiveWriter(path, gzip, out);
  }

  async #write(data: Buffer): Promise<void> {
    if (!this.gzip.write(data)) await once(this.gzip, 'drain');
  }

  /** Adds one regular file (mode 0600). */
  async add(name: string, data: Buffer, mtimeMs: number): Promise<void> {
    const wrong = checkName(name);
    if (wrong !== null) throw new Error(`${name}: ${wrong}`);
    if (this.#names.has(name) || name === MANIFEST_NAME) throw new Error(`${name}: already in the archive`);
    this.#names.add(name);
    await this.#write(header(name, data.length, mtimeMs));
    await this.#write(data);
    await this.#write(padding(data.length));
    this.#files.push({ path: name, size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
  }

  /** Appends the manifest and the end-of-archive blocks, then makes the file durable under its real name. */
  async finish(extra: Record<string, unknown> = {}): Promise<Manifest> {
    const manifest: Manifest = { format: 'pastebin-backup', version: 1, created_at: new Date().toISOString(), ...extra, files: this.#files };
    const data = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`);
    await this.#write(header(MANIFEST_NAME, data.length, Date.now()));
    await this.#write(data);
    await this.#write(padding(data.length));
    await this.#write(Buffer.alloc(2 * BLOCK));
    this.gzip.end();
    await once(this.out, 'close');
    const fd = await byFd.open(`${this.path}.part`, 'r');
    try {
      await byFd.sync(fd);
    } finally {
      await byFd.close(fd);
    }
    await rename(`${this.path}.part`, this.path);
    await fsyncDir(dirname(this.path));
    return manifest;
  }

  /** Stops writing and removes the `.part` file. */
  async abort(): Promise<void> {
    this.gzip.destroy();
    this.out.destroy();
    await unlink(`${this.path}.part`).catch(() => undefined);
  }
}

/** A header's string field: up to its first NUL. */
const text = (h: Buffer, offset: number, width: number): string => {
  const field = h.subarray(offset, offset + width);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? width : end).toString('utf8');
};

function parseOctal(h: Buffer, offset: number, width: number, what: string): number {
  const s = text(h, offset, width).trim();
  if (!/^[0-7]+$/.test(s)) throw new ArchiveError(`a member header has a bad ${what}`);
  return parseInt(s, 8);
}

/**
 * Reads an archive as a stream: calls `onFile` for each regular file but the manifest, in
 * order (each file's bytes are held whole, never the archive), then checks the manifest:
 * present and last, naming every file once with its size and SHA-256, and nothing else.
 */
export async function readArchive(path: string, onFile: (name: string, data: Buffer) => Promise<void>): Promise<Manifest> {
  const seen = new Map<string, ManifestEntry>();
  let manifest: Manifest | null = null;
  let pending: Buffer = Buffer.alloc(0);
  let ended = false;
  const input = createReadStream(path).pipe(createGunzip());
  try {
    // A small state machine over the stream: a header, then its data and padding.
    let member: { name: string; size: number; type: string } | null = null;
    for await (const chunk of input as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (ended) break;
        if (member === null) {
          if (pending.length < BLOCK) break;
          const h = pending.subarray(0, BLOCK);
          if (h.every((b) => b === 0)) {
            ended = true;
            break;
          }
          let sum = 0;
          for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] as number);
          if (sum !== parseOctal(h, 148, 8, 'checksum')) throw new ArchiveError('a member header is damaged (checksum mismatch)');
          const prefix = text(h, 345, 155);
          const name = prefix === '' ? text(h, 0, 100) : `${prefix}/${text(h, 0, 100)}`;
          const type = String.fromCharCode(h[156] as number);
          member = { name, size: parseOctal(h, 124, 12, 'size'), type };
          pending = pending.subarray(BLOCK);
          continue;
        }
        const whole = member.size + padding(member.size).length;
        if (pending.length < whole) break;
        const data = Buffer.from(pending.subarray(0, member.size));
        pending = pending.subarray(whole);
        const { name, type } = member;
        member = null;
        if (type === '5') continue; // A folder entry (from another tar): folders come from file paths.
        if (type !== '0' && type !== '\0') throw new ArchiveError(`${name} is not a regular file`);
        if (manifest !== null) throw new ArchiveError(`${name} comes after ${MANIFEST_NAME}, which must be last`);
        const wrong = checkName(name);
        if (wrong !== null) throw new ArchiveError(`member "${name}" is ${wrong}`);
        if (name === MANIFEST_NAME) {
          try {
            manifest = JSON.parse(data.toString('utf8')) as Manifest;
          } catch {
            throw new ArchiveError(`${MANIFEST_NAME} is not valid JSON`);
          }
          continue;
        }
        if (seen.has(name)) throw new ArchiveError(`${name} is in the archive twice`);
        seen.set(name, { path: name, size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
        await onFile(name, data);
      }
    }
  } catch (err) {
    input.destroy();
    if (err instanceof ArchiveError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'Z_STREAM_ERROR') throw new ArchiveError('it is not a whole gzip file (cut short or damaged)');
    throw err;
  }
  if (!ended && manifest === null) throw new ArchiveError('it ends before its manifest (cut short?)');
  if (manifest === null) throw new ArchiveError(`it has no ${MANIFEST_NAME}: not a backup of this service`);
  if (manifest.format !== 'pastebin-backup' || manifest.version !== 1 || !Array.isArray(manifest.files)) throw new ArchiveError(`${MANIFEST_NAME} is not a manifest this version reads`);
  const listed = new Set<string>();
  for (const f of manifest.files) {
    const got = seen.get(f.path);
    if (got === undefined) throw new ArchiveError(`${f.path} is in the manifest but not in the archive`);
    if (got.size !== f.size || got.sha256 !== f.sha256) throw new ArchiveError(`${f.path} does not match the manifest (size or SHA-256 differs)`);
    listed.add(f.path);
  }
  for (const name of seen.keys()) if (!listed.has(name)) throw new ArchiveError(`${name} is in the archive but not in the manifest`);
  return manifest;
}
