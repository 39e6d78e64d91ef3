import { Readable } from 'node:stream';
import type { Reply } from '../../http/reply.ts';
import { redirect } from '../../http/reply.ts';
import { contentDisposition } from '../../http/disposition.ts';
import { zipLength, zipStream, type ZipEntry } from '../../http/zip.ts';
import { filesOf } from '../../paste/files.ts';
import { contentOf, type Paste } from '../../paste/paste.ts';
import type { WebContext } from '../context.ts';
import { downloadName, passwordGate, readerWithoutPassword, visiblePaste } from './paste.ts';

/**
 * The name of the paste's text in its zip: `paste.<ext>`, or its title's download name
 * (README, Web pages), never one of its files' names.
 */
function textName(p: Paste): string {
  const taken = new Set(filesOf(p).map((f) => f.name));
  const named = p.title === '' ? downloadName({ ...p, title: 'paste' }) : downloadName(p);
  return taken.has(named) ? downloadName({ ...p, title: '' }) : named;
}

/**
 * A file's name in the zip: some unzip tools read a backslash as a folder separator
 * (`..\..\run.bat`), and a name is never a path, so it becomes `_`, kept apart from the other names.
 */
function entryName(name: string, taken: Set<string>): string {
  if (!name.includes('\\')) return name;
  const flat = name.replaceAll('\\', '_');
  let n = flat;
  for (let i = 2; taken.has(n); i++) n = `${i}-${flat}`;
  taken.add(n);
  return n;
}

/**
 * GET /p/{hash}/files.zip: the whole paste in one zip (README, Web pages), under the page's
 * read rules as its files are: every file under its stored name, and the text, when there
 * is any and the server can read it (not an encrypted paste's envelope). Nothing is counted.
 */
export async function pasteZip(ctx: WebContext): Promise<Reply> {
  const p = await visiblePaste(ctx);
  // A one-time paste's files are not served (paste/service.ts, `file`): its one read is the page.
  if (p.burn_after_read === 1) return redirect(`/p/${p.hash}`);
  const reader = readerWithoutPassword(ctx, p);
  if (reader === null) return passwordGate(ctx, p, `/p/${p.hash}`, [], 401);
  const opts = { proof: reader.proof, client: ctx.clientKey, consume: false };
  const current = (await ctx.deps.pastes.read(p.hash, ctx.viewer, opts)).paste;
  // Each file opened now, so one gone answers 404 before a byte of the archive is sent.
  const files = await Promise.all(filesOf(current).map((f) => ctx.deps.pastes.file(p.hash, f.name, ctx.viewer, opts)));
  const text = current.encrypted === 1 ? '' : contentOf(current);
  const named = text === '' ? null : textName(current);
  const taken = new Set(files.map(({ file }) => file.name).filter((n) => !n.includes('\\')));
  if (named !== null) taken.add(named);
  const entries: ZipEntry[] = files.map(({ file, bytes }) => ({
    name: entryName(file.name, taken),
    size: bytes.size,
    open: () => bytes.stream(),
  }));
  if (named !== null) {
    const body = Buffer.from(text, 'utf8');
    entries.unshift({ name: named, size: body.length, open: () => Readable.from([body]) });
  }
  const stamp = new Date(current.updated_at);
  return {
    kind: 'stream',
    status: 200,
    contentType: 'application/zip',
    length: zipLength(entries),
    open: () => zipStream(entries, stamp),
    headers: {
      'content-disposition': contentDisposition('attachment', `paste-${p.hash}.zip`),
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, no-store',
    },
  };
}
