import { createHash } from 'node:crypto';
import { type Res, req } from './server.ts';

/** A `multipart/form-data` body: text fields, then files (name, bytes, type). */
export function multipart(
  fields: Record<string, string | string[]>,
  files: { name: string; bytes: Buffer; type?: string }[] = [],
): { body: Buffer; type: string } {
  const boundary = `----test${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 16)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    for (const one of Array.isArray(v) ? v : [v])
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${one}\r\n`));
  for (const f of files) {
    const quoted = f.name.replaceAll('\\', '\\\\').replaceAll('"', '\\"');
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted}"\r\nContent-Type: ${f.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      f.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

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
