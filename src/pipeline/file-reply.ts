import { namesEtag } from '../http/conditional.ts';
import { contentDisposition } from '../http/disposition.ts';
import type { Headers, Reply } from '../http/reply.ts';
import { inlineImageType } from '../paste/files.ts';
import type { Signer } from '../crypto/signature.ts';
import { isLiveGrant } from '../paste/file-grant.ts';
import type { PasteFile } from '../paste/files.ts';
import type { Paste } from '../paste/paste.ts';
import type { PasteService, ServedFile } from '../paste/service.ts';

/**
 * One file of a paste as both sides send it (README, Files): never as a page of ours
 * (`nosniff`, `Content-Security-Policy: sandbox`), inline only when its bytes are a PNG,
 * JPEG, GIF or WebP image (whatever type it claims), else an attachment under its name.
 * An `If-None-Match` naming its bytes is 304, after every read check has passed.
 */
export function fileReply({ file, bytes }: ServedFile, headers: Headers = {}, ifNoneMatch?: string): Reply {
  // Bytes are named by their SHA-256, so it is their strong validator whatever revision holds them.
  const etag = `"${file.sha256}"`;
  if (namesEtag(ifNoneMatch, etag, false))
    return { kind: 'text', status: 304, body: '', headers: { ...headers, etag } };
  const image = inlineImageType(bytes.head);
  const contentType = image ?? 'application/octet-stream';
  const all = {
    ...headers,
    etag,
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
    'content-disposition': contentDisposition(image === null ? 'attachment' : 'inline', file.name),
  };
  // Bytes held in memory go out in one write, with the head, as any other body does.
  if (bytes.whole !== undefined)
    return { kind: 'bytes', status: 200, contentType, body: bytes.whole, length: bytes.size, headers: all };
  return { kind: 'stream', status: 200, contentType, length: bytes.size, open: () => bytes.stream(), headers: all };
}

/**
 * A burned paste's file for its grant (paste/file-grant.ts), on the API and the page alike:
 * never kept by a cache, and a HEAD spends nothing.
 */
export async function grantedFileReply(
  pastes: Pick<PasteService, 'grantedFile'>,
  signer: Signer,
  at: { hash: string; name: string; grant: string; head: boolean },
): Promise<Reply> {
  const live = (p: Paste, f: PasteFile, now: number): boolean => isLiveGrant(signer, p, f, at.grant, now);
  const served = await pastes.grantedFile(at.hash, at.name, live, !at.head);
  return fileReply(served, { 'cache-control': 'no-store' });
}
