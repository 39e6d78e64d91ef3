import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { access, type FileHandle, mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { utf8Bytes } from '../http/text-bytes.ts';
import { asStorageError, isErrno } from './errors.ts';

/**
 * File-descriptor calls for the write path. fs/promises wraps every opened file in a
 * FileHandle (an event emitter the garbage collector must finalize); these plain-number
 * versions cost a create two such objects fewer.
 */
export const byFd = {
  open: promisify(fs.open),
  write: promisify(fs.write),
  datasync: promisify(fs.fdatasync),
  sync: promisify(fs.fsync),
  close: promisify(fs.close),
  fstat: promisify(fs.fstat),
  ftruncate: promisify(fs.ftruncate),
};

const readFileCb = promisify(fs.readFile);

/**
 * A whole file as UTF-8 text. The callback readFile does its open, fstat, read and close
 * without the FileHandle and per-step promises of fs/promises' readFile: cheaper on the
 * read path, where a cache miss lands.
 */
export const readText = (path: string): Promise<string> => readFileCb(path, 'utf8');

/**
 * mkdir -p that says why it failed: Node's recursive mkdir reports a read-only or
 * unwritable parent as ENOENT, so on ENOENT the nearest existing parent is asked whether
 * it can be written, and its refusal (EROFS, EACCES) is what is thrown, with its path.
 */
export async function mkdirp(dir: string): Promise<string | undefined> {
  try {
    return await mkdir(dir, { recursive: true });
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw asStorageError(err, dir);
    for (let d = dirname(dir); ; d = dirname(d)) {
      const there = await access(d).then(
        () => true,
        () => false,
      );
      if (there) {
        await access(d, fs.constants.W_OK).catch((e: unknown) => {
          throw asStorageError(e, d);
        });
        throw err;
      }
      if (d === dirname(d)) throw err;
    }
  }
}

/**
 * The data folder, made if missing and checked to be writable before anything else, so a
 * read-only or unwritable one is named in one line at start (README, Run it).
 */
export async function ensureWritableDir(dir: string): Promise<void> {
  await mkdirp(dir);
  await access(dir, fs.constants.W_OK).catch((err: unknown) => {
    throw asStorageError(err, dir);
  });
}

/** Writes all of `data` at the file's position (its end, when opened to append). */
export async function writeAll(fd: number, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === 'string' ? utf8Bytes(data) : data;
  for (let done = 0; done < bytes.length; )
    done += (await byFd.write(fd, bytes, done, bytes.length - done, null)).bytesWritten;
}

/** fsync a folder so that renames, links and unlinks inside it are on disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await byFd.open(dir, 'r');
  try {
    await byFd.sync(fd);
  } finally {
    // Once the fsync has answered, closing the folder changes nothing on disk: the caller
    // goes on (an acknowledgement waits one round trip less) while it closes.
    void byFd.close(fd).catch(() => undefined);
  }
}

/** A file's text, or null when there is no such file. Other I/O errors propagate. */
export async function readTextIfThere(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/** A file opened for reading, or null when there is no such file. Other I/O errors propagate. */
export async function openIfThere(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/** Lists a folder, treating a missing folder as empty. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/** A spooled file, as a store is handed it: its path, and the size and SHA-256 it is said to hold. */
type Spooled = { readonly path: string; readonly size: number; readonly sha256: string };

/** Spooled files whose size and hash were counted from the very bytes as they were written (hashedAsSpooled). */
const HASHED_AS_SPOOLED = new WeakSet<Spooled>();

/**
 * Vouches for `file`: its size and SHA-256 were counted from the bytes as the spooler wrote
 * them (http/multipart.ts), after every write finished, so checkSpooled need not read them
 * again. Only the code that hashed the bytes itself may call it.
 */
export function hashedAsSpooled<T extends Spooled>(file: T): T {
  HASHED_AS_SPOOLED.add(file);
  return file;
}

/**
 * Refuses a spooled upload that is not the `size` bytes hashing to `sha256` it is said to be,
 * and removes it: bytes are stored by their hash once, so wrong ones would be served for every
 * paste that names that hash, and a later put of the true bytes would be skipped. One the
 * spooler vouched for (hashedAsSpooled) is taken without reading it twice.
 */
export async function checkSpooled(file: Spooled): Promise<void> {
  if (HASHED_AS_SPOOLED.has(file)) return;
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of fs.createReadStream(file.path)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch (err) {
    await unlink(file.path).catch(() => undefined);
    throw err;
  }
  const sha256 = hash.digest('hex');
  if (size === file.size && sha256 === file.sha256) return;
  await unlink(file.path).catch(() => undefined);
  const said = `the ${file.size} bytes of ${file.sha256}`;
  throw new Error(`the upload ${file.path} is ${size} bytes hashing to ${sha256}, not ${said}: not stored`);
}
