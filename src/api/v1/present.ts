import { filesOf, type PasteFile, recordOf } from '../../paste/files.ts';
import { fileGrant } from '../../paste/file-grant.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { contentOf, formatTime, HASH_RE, shortcodeOf, type Paste } from '../../paste/paste.ts';
import type { Problem } from '../../paste/validate.ts';
import { ANONYMOUS_NAME, isAnonymous } from '../../paste/anonymous.ts';
import type { ApiDeps } from '../request.ts';
import { ownedUtf8Bytes } from '../../http/text-bytes.ts';
import { LARGE_CHARS } from './bodies.ts';

/** The `hash` parameter, refused with 400 unless it has the shape of a hash (README, API). */
export function requireHash(...sources: Fields[]): string {
  for (const fields of sources) {
    const v = Object.hasOwn(fields, 'hash') ? fields['hash'] : undefined;
    if (v === undefined) continue;
    if (typeof v === 'string' && HASH_RE.test(v)) return v;
    throw badRequest('hash must be 10 letters or digits');
  }
  throw badRequest('hash is required');
}

export const pasteUrl = (deps: ApiDeps, hash: string): string => `${deps.baseUrl}/p/${hash}`;
/** An anonymous paste's delete link (README, Anonymous pastes): its page asks before it deletes. */
export const deleteUrl = (deps: Pick<ApiDeps, 'baseUrl'>, hash: string, key: string): string =>
  `${deps.baseUrl}/p/${hash}/delete/${key}`;
export const shortUrl = (deps: Pick<ApiDeps, 'baseUrl'>, hash: string): string =>
  `${deps.baseUrl}/s/${shortcodeOf(hash)}`;

/** The paste object's fields but view_count and content, as they stand inside paste.php's answer. */
export const fieldsJson = (deps: FieldDeps, p: Paste, burnedAt?: number): string =>
  `,${JSON.stringify(presentFields(deps, p, burnedAt)).slice(1, -1)},"content":`;

type FieldDeps = Pick<ApiDeps, 'baseUrl' | 'accounts' | 'signer'>;

/**
 * A paste's files as paste.php lists them; the read that burned a one-time paste gives each
 * a `url` that fetches it once (paste/file-grant.ts).
 */
function filesJson(deps: FieldDeps, p: Paste, burnedAt: number | undefined): Record<string, unknown>[] {
  return filesOf(p).map((f) =>
    burnedAt === undefined ? { ...recordOf(f) } : { ...recordOf(f), url: grantedFileUrl(deps, p.hash, burnedAt, f) },
  );
}

/** The API's address of a burned paste's file with its grant: one fetch, within FILE_GRANT_MS. */
export const grantedFileUrl = (
  deps: Pick<ApiDeps, 'baseUrl' | 'signer'>,
  hash: string,
  burnedAt: number,
  f: PasteFile,
): string => {
  const name = encodeURIComponent(f.name);
  return `${deps.baseUrl}/api/v1/file.php?hash=${hash}&name=${name}&grant=${fileGrant(deps.signer, hash, burnedAt, f)}`;
};

/** The paste object of the README's Get a paste, but for view_count and content. Password and highlight stay inside. */
function presentFields(deps: FieldDeps, p: Paste, burnedAt: number | undefined): Record<string, unknown> {
  const owner = deps.accounts.user(p.owner_id);
  return {
    hash: p.hash,
    title: p.title,
    language: p.language,
    privacy: p.privacy,
    burn_after_read: p.burn_after_read,
    short_url: shortUrl(deps, p.hash),
    created_at: formatTime(p.created_at),
    expire_at: p.expire_at === null ? null : formatTime(p.expire_at),
    revision: p.revision ?? 1,
    // Only on encrypted pastes: the answer for every other paste is as it always was.
    ...(p.encrypted === 1 ? { encrypted: 1 } : {}),
    owner: { id: p.owner_id, display_name: isAnonymous(p) ? ANONYMOUS_NAME : (owner?.name ?? 'unknown') },
    files: filesJson(deps, p, burnedAt),
  };
}

const BODY_HEAD = '{"ok":true,"paste":{"view_count":';

/**
 * The whole `paste.php` answer, in pieces, and its size in bytes: the view count, the other
 * fields rendered once per paste version (bodies.ts), and the content, which a paste
 * already holds as JSON. The size is summed from what the rendering measured once (all but
 * the view count are the same for every read of a version).
 */
export function pasteBody(
  deps: ApiDeps,
  p: Paste,
  viewCount: number,
  burnedAt?: number,
): { pieces: [string, string | Buffer, string]; length: number } {
  // The read that burns has its own paste object, so its rendering with grants is kept for it alone.
  const fields = deps.bodies.fields(p, (d, q) => fieldsJson(d, q, burnedAt), deps);
  const content =
    p.content_json.length < LARGE_CHARS
      ? p.content_json
      : deps.bodies.encoded(p, 'json', () => ownedUtf8Bytes(p.content_json));
  const head = BODY_HEAD + viewCount + fields.text;
  // The view count's digits are ASCII: one byte each, like BODY_HEAD's and the tail's.
  return {
    pieces: [head, content, BODY_TAIL],
    length: BODY_HEAD.length + String(viewCount).length + fields.bytes + fields.contentBytes + BODY_TAIL.length,
  };
}

const BODY_TAIL = '}}';

/** The raw.php body: the content as UTF-8 (bytes encoded once per version when it is large). */
export function rawBody(deps: ApiDeps, p: Paste): Buffer | string {
  if (p.content_json.length < LARGE_CHARS) return contentOf(p);
  return deps.bodies.encoded(p, 'utf8', () => ownedUtf8Bytes(contentOf(p)));
}

/** Turns validation problems into one refusal: 413 if any is about size, else 400. */
export function refuse(problems: Problem[]): HttpError {
  const big = problems.find((p) => p.tooLarge);
  if (big !== undefined) return new HttpError('payload_too_large', big.message);
  return new HttpError('bad_request', problems.map((p) => p.message).join('; '));
}
