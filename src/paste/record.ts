import { fileNameProblem, type PasteFile, recordOf } from './files.ts';
import { encodeContent, HASH_RE, PRIVACIES, type Paste, type Receipt } from './paste.ts';

const isReceipt = (r: unknown): boolean => {
  const o = r as Partial<Receipt> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    isTime(o.at) &&
    (o.via === 'web' || o.via === 'api') &&
    (o.token_id === null || typeof o.token_id === 'string')
  );
};

/**
 * A paste record that cannot be a paste (a stored file, an export line): unparsable, or a
 * field missing or of the wrong type. Carries what could be read of it (hash, owner), so its
 * owner can still delete it.
 */
export class DamagedRecord extends Error {
  constructor(
    readonly reason: string,
    readonly hash: string | null,
    readonly ownerId: number | null,
  ) {
    super(reason);
  }
}

const isFile = (v: unknown): boolean => {
  const o = v as Partial<PasteFile> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.name === 'string' &&
    fileNameProblem(o.name) === null &&
    Number.isSafeInteger(o.size) &&
    (o.size as number) >= 0 &&
    typeof o.type === 'string' &&
    typeof o.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(o.sha256) &&
    (o.fetched === undefined || isTime(o.fetched))
  );
};

const isTime = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isFlag = (v: unknown): boolean => v === 0 || v === 1;

/** The first field of a parsed paste record that is missing or of the wrong type, or null. */
function wrongField(f: Record<string, unknown>): string | null {
  if (typeof f['hash'] !== 'string' || !HASH_RE.test(f['hash'])) return 'hash';
  if (typeof f['title'] !== 'string') return 'title';
  if (typeof f['content'] !== 'string') return 'content';
  if (typeof f['language'] !== 'string') return 'language';
  if (!(PRIVACIES as readonly unknown[]).includes(f['privacy'])) return 'privacy';
  if (!isFlag(f['highlight'])) return 'highlight';
  if (!isFlag(f['burn_after_read'])) return 'burn_after_read';
  if (typeof f['burned'] !== 'boolean') return 'burned';
  if (f['password'] !== null && typeof f['password'] !== 'string') return 'password';
  if (!Number.isInteger(f['owner_id'])) return 'owner_id';
  if (!isTime(f['created_at'])) return 'created_at';
  if (!isTime(f['updated_at'])) return 'updated_at';
  if (f['expire_at'] !== null && !isTime(f['expire_at'])) return 'expire_at';
  if (!Number.isInteger(f['view_count']) || (f['view_count'] as number) < 0) return 'view_count';
  if (f['receipt'] !== undefined && f['receipt'] !== null && !isReceipt(f['receipt'])) return 'receipt';
  if (f['revision'] !== undefined && (!Number.isInteger(f['revision']) || (f['revision'] as number) < 1))
    return 'revision';
  if (f['delete_key'] !== undefined && (typeof f['delete_key'] !== 'string' || !/^[0-9a-f]{64}$/.test(f['delete_key'])))
    return 'delete_key';
  if (f['encrypted'] !== undefined && !isFlag(f['encrypted'])) return 'encrypted';
  if (f['files'] !== undefined && (!Array.isArray(f['files']) || !f['files'].every(isFile))) return 'files';
  return null;
}

/**
 * A paste from a parsed record's fields (a stored file's, an export line's), with `content`
 * anywhere among them. Built field by field, in the order `PasteService.create` writes them,
 * so every paste object has one shape: objects copied out of `JSON.parse` have one per
 * record's order and value types, which made every read of a paste's fields megamorphic.
 */
export function pasteOf(parsed: unknown): Paste {
  const f = parsed as Omit<Paste, 'content_json'> & { content: string };
  const wrong = typeof f !== 'object' || f === null ? 'not an object' : wrongField(f);
  if (wrong !== null) {
    const owner = typeof f === 'object' && f !== null && Number.isInteger(f.owner_id) ? f.owner_id : null;
    const hash =
      typeof f === 'object' && f !== null && typeof f.hash === 'string' && HASH_RE.test(f.hash) ? f.hash : null;
    throw new DamagedRecord(`the record is malformed: ${wrong}`, hash, owner);
  }
  const paste: Paste = {
    v: 1,
    hash: f.hash,
    title: f.title,
    content_json: encodeContent(f.content),
    language: f.language,
    privacy: f.privacy,
    highlight: f.highlight,
    burn_after_read: f.burn_after_read,
    burned: f.burned,
    password: f.password,
    owner_id: f.owner_id,
    created_at: f.created_at,
    updated_at: f.updated_at,
    expire_at: f.expire_at,
    view_count: f.view_count,
    receipt: f.receipt ?? null,
    revision: f.revision ?? 1,
    ...(typeof f.delete_key === 'string' ? { delete_key: f.delete_key } : {}),
    ...(f.files !== undefined && f.files.length > 0 ? { files: f.files.map(recordOf) } : {}),
  };
  // Only an encrypted paste has the flag, so every other paste keeps the one shape.
  return f.encrypted === 1 ? { ...paste, encrypted: 1 } : paste;
}
