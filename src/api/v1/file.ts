import { badRequest } from '../../http/errors.ts';
import type { Reply } from '../../http/reply.ts';
import { fileReply, grantedFileReply } from '../../pipeline/file-reply.ts';
import { stringField, type ApiRequest } from '../request.ts';
import { requireHash } from './present.ts';
import { password, revisionParam } from './read.ts';

/**
 * GET file.php?hash=&name= — one file of a paste, under the paste's read rules (README, Files);
 * with `revision=`, a file of an earlier version; with `grant=`, a burned paste's file, once (paste/file-grant.ts).
 */
export async function getFile(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.query);
  const name = stringField(r.query, 'name');
  if (name === null || name === '') throw badRequest('name is required');
  const grant = stringField(r.query, 'grant');
  if (grant !== null) {
    // A burned paste's file, for the reader who burned it: the grant is the key (README, Files).
    return grantedFileReply(r.deps.pastes, r.deps.signer, { hash, name, grant, head: r.req.method === 'HEAD' });
  }
  const revision = revisionParam(r);
  const opts = { password: password(r), client: r.clientKey, consume: false };
  const served = await r.deps.pastes.file(hash, name, r.viewer, opts, revision ?? undefined);
  return fileReply(served, {}, r.req.headers['if-none-match']);
}
