import { badRequest } from '../../http/errors.ts';
import type { Reply } from '../../http/reply.ts';
import { fileReply } from '../../pipeline/file-reply.ts';
import { stringField, type ApiRequest } from '../request.ts';
import { requireHash } from './present.ts';
import { password } from './read.ts';

/** GET file.php?hash=&name= — one file of a paste, under the paste's read rules (README, Files). */
export async function getFile(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.query);
  const name = stringField(r.query, 'name');
  if (name === null || name === '') throw badRequest('name is required');
  const served = await r.deps.pastes.file(hash, name, r.viewer, {
    password: password(r),
    client: r.clientKey,
    consume: false,
  });
  return fileReply(served);
}
