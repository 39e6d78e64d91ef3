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
 */
export function fileReply({ file, bytes }: ServedFile, headers: Headers = {}): Reply {
  const image = inlineImageType(bytes.head);
  return {
    kind: 'stream',
    status: 200,
    contentType: image ?? 'application/octet-stream',
    length: bytes.size,
    open: () => bytes.stream(),
    headers: {
      ...headers,
      'x-content-type-options': 'nosniff',
      'content-security-policy': 'sandbox',
      'content-disposition': contentDisposition(image === null ? 'attachment' : 'inline', file.name),
    },
  };
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
