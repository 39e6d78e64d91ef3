import type { IncomingMessage } from 'node:http';
import { maxBodyBytes } from '../http/body.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { type Multipart, readMultipart, type Upload } from '../http/multipart.ts';
import { fileLimit, type FileLimits, fileNameProblem, type NewFile } from '../paste/files.ts';
import { hashedAsSpooled } from '../storage/fs.ts';

/** Fields a multipart edit may repeat: each names a file to remove. */
const REPEATABLE: ReadonlySet<string> = new Set(['remove_file']);

/**
 * A multipart body of a create or edit, the same on both sides (README, Files): its text
 * parts are the fields, its `file` parts spooled to temporary files. Refused before a byte
 * is read when its declared length is past what the limits allow. A file sent after an
 * `encrypted=1` part may be the envelope of a MAX_FILE_BYTES file (docs/encrypted-pastes.md).
 * With `refuseFiles`, text parts are read and the first file part is refused with it.
 */
export function readUploads(
  req: IncomingMessage,
  boundary: string,
  files: { tmpDir: string; limits: FileLimits },
  maxPasteBytes: number,
  refuseFiles?: HttpError,
): Promise<Multipart> {
  const { limits, tmpDir } = files;
  const fieldBytes = maxBodyBytes(maxPasteBytes);
  const [plain, sealed] = [fileLimit(limits, false), fileLimit(limits, true)];
  // Each part's headers and delimiter take a few hundred bytes; 16 KiB a file is plenty.
  const total = fieldBytes + limits.maxFilesPerPaste * (sealed.bytes + 16 * 1024);
  if (Number(req.headers['content-length'] ?? 0) > total)
    throw new HttpError(
      'payload_too_large',
      `The request is larger than ${limits.maxFilesPerPaste} files of MAX_FILE_BYTES`,
    );
  return readMultipart(
    req,
    boundary,
    {
      tmpDir,
      fileField: 'file',
      maxFileBytes: limits.maxFileBytes,
      // An envelope's allowance only after `encrypted=1`, so a plain file stops as soon as it passes MAX_FILE_BYTES.
      fileLimit: (fields) => (fields['encrypted'] === '1' ? sealed : plain),
      maxFiles: limits.maxFilesPerPaste,
      maxFieldBytes: fieldBytes,
      ...(refuseFiles === undefined ? {} : { refuseFiles }),
    },
    REPEATABLE,
  );
}

/**
 * The files a multipart request brought, as the paste will keep them: each name checked
 * (README, Files: any UTF-8, never a path; 400 otherwise), its type the one the client gave
 * when it has the form of one. The spooler counted their sizes and hashes as it wrote them:
 * they are vouched for, and no store reads them again to check (storage/fs.ts checkSpooled).
 */
export function newFilesOf(uploads: readonly Upload[]): NewFile[] {
  return uploads.map((u) => {
    const problem = fileNameProblem(u.name);
    if (problem !== null) throw badRequest(`${problem}: ${JSON.stringify(u.name.slice(0, 80))}`);
    const type = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(u.type)
      ? u.type
      : 'application/octet-stream';
    return hashedAsSpooled({ name: u.name, size: u.size, type, sha256: u.sha256, path: u.path });
  });
}
