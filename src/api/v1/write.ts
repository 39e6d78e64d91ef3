import type { Actor } from '../../log/audit.ts';
import { prefersPlainText } from '../../http/accept.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import { multipartBoundary } from '../../http/multipart.ts';
import { type NewFile, recordOf } from '../../paste/files.ts';
import { newFilesOf } from '../../pipeline/uploads.ts';
import { namesEtag } from '../../http/conditional.ts';
import { etagOf, type Paste } from '../../paste/paste.ts';
import type { Precondition } from '../../paste/service.ts';
import { json, type Reply } from '../../http/reply.ts';
import { ANONYMOUS_OWNER, type AnonymousDoor } from '../../paste/anonymous.ts';
import { validateCreate, validateEdit, type CreateInput } from '../../paste/validate.ts';
import type { ApiRequest } from '../request.ts';
import { Idempotency } from './idempotency.ts';
import { deleteUrl, pasteUrl, refuse, requireHash, shortUrl } from './present.ts';

/**
 * POST paste_create.php (README, Create a paste). A client that asks for text (`Accept:
 * text/plain`, a shell piping into curl) gets the paste's URL and a newline.
 */
export async function createPaste(r: ApiRequest): Promise<Reply> {
  const { hash, deleteUrl, warning } = await makePaste(r);
  const url = pasteUrl(r.deps, hash);
  if (prefersPlainText(r.req.headers.accept)) return { kind: 'text', status: 200, body: `${url}\n` };
  const made = {
    ok: true,
    hash,
    url,
    short_url: shortUrl(r.deps, hash),
    ...(warning === undefined ? {} : { warning }),
  };
  return json(deleteUrl === undefined ? made : { ...made, delete_url: deleteUrl });
}

/**
 * Makes the paste a create asks for, by the token's rules or, without one, the anonymous
 * door's; answers its hash, and an anonymous paste's delete link. Both APIs create here.
 */
export async function makePaste(r: ApiRequest): Promise<{ hash: string; deleteUrl?: string; warning?: string }> {
  const files = newFiles(r);
  const v = validateCreate(r.body, r.deps.maxPasteBytes, files.length > 0);
  if (!v.ok) throw refuse(v.problems);
  const warned = v.warning === undefined ? {} : { warning: v.warning };
  const door = r.deps.anonymous;
  if (r.principal.anonymous === true && door !== null)
    return { ...(await makeAnonymous(r, door, v.value, files)), ...warned };
  const input = v.value;
  withinTokenLimits(r, input.content, input.privacy);
  const owner = r.principal.userId;
  // A retry with the same key must bring the same files (README, Safe retries).
  const fingerprint = files.length === 0 ? input : { ...input, files: files.map(recordOf) };
  const hash = await once(
    r,
    'create',
    JSON.stringify(fingerprint),
    null,
    async (h) => (await r.deps.pastes.create(input, owner, h, undefined, files)).hash,
  );
  return { hash, ...warned };
}

/**
 * A create without a token (README, Anonymous pastes): held to the door's limits, never
 * retried by Idempotency-Key (there is no token to keep the key under), and answered with
 * the delete link, whose key is shown this once and kept only as a digest.
 */
async function makeAnonymous(
  r: ApiRequest,
  door: AnonymousDoor,
  asked: CreateInput,
  files: readonly NewFile[],
): Promise<{ hash: string; deleteUrl: string }> {
  const input = { ...asked, expiry: door.expiryOf(r.body, asked.expiry) };
  const problems = door.problems(r.body, input);
  if (problems.length > 0) throw refuse(problems);
  const { key, digest } = door.newDeleteKey();
  const { hash } = await r.deps.pastes.create(input, ANONYMOUS_OWNER, undefined, digest, files);
  return { hash, deleteUrl: deleteUrl(r.deps, hash, key) };
}

/**
 * The files a multipart request brought, as the paste will keep them: each name checked
 * (README, Files: any UTF-8, never a path; 400 otherwise), its type the one the client gave
 * when it has the form of one.
 */
function newFiles(r: ApiRequest): NewFile[] {
  return newFilesOf(r.uploads);
}

/** The names of the files an edit removes (`remove_file`, repeatable: one a line). */
function removedNames(r: ApiRequest): string[] {
  const v = r.body['remove_file'];
  if (v === undefined || v === null) return [];
  if (typeof v !== 'string') throw badRequest('remove_file must be a file name');
  return v.split('\n');
}

/** The token's own limits (README, Web pages: API Tokens): 413 past its size, 403 for a privacy it may not use. */
function withinTokenLimits(r: ApiRequest, content: string | undefined, privacy: string | undefined): void {
  const { maxPasteBytes, privacies } = r.principal;
  if (maxPasteBytes !== null && content !== undefined && Buffer.byteLength(content) > maxPasteBytes) {
    throw new HttpError('payload_too_large', `This token may send at most ${maxPasteBytes} bytes of content`);
  }
  if (privacies !== null && privacy !== undefined && !privacies.includes(privacy)) {
    throw new HttpError('forbidden', `This token may only make ${privacies.join(' or ')} pastes`);
  }
}

/** `If-Match` (README, Caching): the write goes ahead only on the revision it names, else 412. */
function unchangedSince(r: ApiRequest): Precondition | undefined {
  const named = r.req.headers['if-match'];
  return named === undefined ? undefined : (p) => namesEtag(named, etagOf(p), true);
}

/**
 * Carries out a write once per `Idempotency-Key` (README, Safe retries), or simply when the
 * request has none. Checked after the fields are valid, so a refused request leaves no record.
 */
function once(
  r: ApiRequest,
  endpoint: string,
  fields: string,
  hash: string | null,
  effect: (hash: string | undefined) => Promise<string>,
): Promise<string> {
  const key = Idempotency.keyOf(r.req.headers['idempotency-key']);
  if (key === null) return effect(hash ?? undefined);
  return r.deps.idempotency.run({ tokenId: r.principal.tokenId, key, endpoint, fields, hash }, effect);
}

/** The caller as the audit log names them (an admin token acting on someone else's paste is audited). */
const actorOf = (r: ApiRequest): Actor => ({
  via: 'api',
  user_id: r.principal.userId,
  name: r.deps.accounts.user(r.principal.userId)?.name ?? null,
  ip: r.ip,
});

/** POST paste_edit.php (README, Edit a paste). */
export async function editPaste(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.body, r.query);
  const changes = { add: newFiles(r), remove: removedNames(r) };
  const multipart = r.uploads.length > 0 || multipartBoundary(r.req.headers['content-type']) !== null;
  const v = validateEdit(r.body, r.deps.maxPasteBytes, multipart);
  if (!v.ok) throw refuse(v.problems);
  const input = v.value;
  withinTokenLimits(r, input.content, input.privacy);
  let edited: Paste | undefined;
  const touched = changes.add.length > 0 || changes.remove.length > 0;
  const fingerprint = touched ? { ...input, add: changes.add.map(recordOf), remove: changes.remove } : input;
  await once(
    r,
    'edit',
    JSON.stringify(fingerprint),
    hash,
    async () => (edited = await r.deps.pastes.edit(hash, input, r.viewer, unchangedSince(r), actorOf(r), changes)).hash,
  );
  // The new revision's ETag (a repeated Idempotency-Key's answer made no revision, and has none).
  return json(
    {
      ok: true,
      hash,
      url: pasteUrl(r.deps, hash),
      short_url: shortUrl(r.deps, hash),
      ...(v.warning === undefined ? {} : { warning: v.warning }),
    },
    200,
    edited === undefined ? undefined : { etag: etagOf(edited) },
  );
}

/** POST paste_delete.php (README, Delete a paste). */
export async function deletePaste(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.body, r.query);
  await r.deps.pastes.delete(hash, r.viewer, unchangedSince(r), actorOf(r));
  return json({ ok: true, deleted: true });
}
