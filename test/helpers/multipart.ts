import { createHash } from 'node:crypto';
import { multipart } from './multipart-body.ts';
import { type Res, req } from './server.ts';

export { multipart };

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Sends `fields` and `files` as one multipart request to `path` (paste_create.php unless told). */
export function sendFiles(
  server: { port: number },
  token: string,
  fields: Record<string, string | string[]>,
  files: { name: string; bytes: Buffer; type?: string }[],
  path = '/api/v1/paste_create.php',
): Promise<Res> {
  const m = multipart(fields, files);
  return req(server, 'POST', path, { token, body: m.body, headers: { 'content-type': m.type } });
}
