import { contentDisposition } from '../http/disposition.ts';
import type { Headers, Reply } from '../http/reply.ts';
import { inlineImageType } from '../paste/files.ts';
import type { ServedFile } from '../paste/service.ts';

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
