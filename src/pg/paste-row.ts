import type { ISql, PendingQuery, Row } from 'postgres';
import { TOMBSTONE_MS } from '../paste/repository.ts';
import { type PasteFile, recordOf } from '../paste/files.ts';
import { isTombstone, type Paste, type Privacy, type Receipt } from '../paste/paste.ts';

/**
 * A paste as a row of `pastes` (pg/migrations/001-initial.sql, 003-anonymous-pastes.sql,
 * 005-encrypted-pastes.sql) and back, and a kept version as a row of `paste_revisions`. Times are timestamptz in the
 * table and epoch ms here: they
 * go in as Dates (whole milliseconds, which is all the server makes) and come out through
 * `extract(epoch ...)`, exact, rather than through a parse of the server's text.
 */

/**
 * The columns a paste is read from `pastes`, times as epoch ms; its count is its row's and
 * the views folded in beside it since (migrations/014-paste-views.sql). `content` is what is
 * read of the text (pg/paste-head.ts reads only the beginning of a long one).
 */
export const pasteColumns = (sql: ISql, content: PendingQuery<Row[]> = sql`content_json`): PendingQuery<Row[]> => sql`
  hash, title, ${content} as content_json, language, privacy, highlight, burn_after_read, burned, password, owner_id,
  (extract(epoch from created_at) * 1000)::float8 as created_at,
  (extract(epoch from updated_at) * 1000)::float8 as updated_at,
  (extract(epoch from expire_at) * 1000)::float8 as expire_at,
  (view_count + coalesce((select v.views from paste_views v where v.hash = pastes.hash), 0))::float8 as view_count,
  receipt, revision, delete_key, encrypted, files`;

/**
 * When the expiry sweep must next look at a paste, or null for never: a tombstone (burned
 * or wiped) when it is old enough to delete, a live expiring paste at its expiry. What the
 * file store's expiry index lists for it (store/pastes.ts, sweepTimeOf).
 */
export const sweepTimeOf = (p: Paste): number | null => (isTombstone(p) ? p.updated_at + TOMBSTONE_MS : p.expire_at);

const receiptOf = (r: unknown): Receipt | null => {
  if (r === null || typeof r !== 'object') return null;
  const o = r as Receipt;
  return { at: o.at, via: o.via, token_id: o.token_id };
};

/**
 * A paste from its row, field by field in the order a paste file is read in
 * (store/paste-record.ts, parseFile), so every paste object has one shape whichever store
 * it came from.
 */
export function pasteOf(r: Row): Paste {
  const paste: Paste = {
    v: 1,
    hash: r['hash'] as string,
    title: r['title'] as string,
    content_json: r['content_json'] as string,
    language: r['language'] as string,
    privacy: r['privacy'] as Privacy,
    highlight: r['highlight'] === true ? 1 : 0,
    burn_after_read: r['burn_after_read'] === true ? 1 : 0,
    burned: r['burned'] as boolean,
    password: r['password'] as string | null,
    owner_id: r['owner_id'] as number,
    created_at: r['created_at'] as number,
    updated_at: r['updated_at'] as number,
    expire_at: r['expire_at'] as number | null,
    view_count: r['view_count'] as number,
    receipt: receiptOf(r['receipt']),
    revision: r['revision'] as number,
    ...(typeof r['delete_key'] === 'string' ? { delete_key: r['delete_key'] } : {}),
    ...(Array.isArray(r['files']) && r['files'].length > 0 ? { files: (r['files'] as PasteFile[]).map(recordOf) } : {}),
  };
  // Only an encrypted paste has the flag, as a paste file read (store/paste-record.ts).
  return r['encrypted'] === true ? { ...paste, encrypted: 1 } : paste;
}

const time = (ms: number): Date => new Date(ms);

/** A paste's row, for an insert or an update; `sweepAt` is when the sweep must look at it next. */
export function rowOf(p: Paste, sweepAt: number | null): Record<string, unknown> {
  return {
    hash: p.hash,
    owner_id: p.owner_id,
    privacy: p.privacy,
    created_at: time(p.created_at),
    updated_at: time(p.updated_at),
    expire_at: p.expire_at === null ? null : time(p.expire_at),
    burned: p.burned,
    language: p.language,
    title: p.title,
    revision: p.revision ?? 1,
    view_count: p.view_count,
    highlight: p.highlight === 1,
    burn_after_read: p.burn_after_read === 1,
    password: p.password,
    content_json: p.content_json,
    encrypted: p.encrypted === 1,
    receipt: p.receipt === undefined || p.receipt === null ? null : receiptOf(p.receipt),
    sweep_at: sweepAt === null ? null : time(sweepAt),
    delete_key: p.delete_key ?? null,
    files: p.files === undefined || p.files.length === 0 ? null : p.files.map(recordOf),
  };
}

/** A kept version's row: its text, the text's size, and the rest of its fields whole. */
export function revisionRowOf(hash: string, p: Paste): Record<string, unknown> {
  const { content_json, ...fields } = p;
  return {
    hash,
    revision: p.revision ?? 1,
    updated_at: time(p.updated_at),
    content_json,
    bytes: Buffer.byteLength(JSON.parse(content_json) as string),
    fields: { ...fields, receipt: p.receipt ?? null, revision: p.revision ?? 1 },
  };
}

/** A kept version from its row's text and fields. */
export function revisionOf(contentJson: string, fields: Record<string, unknown>): Paste {
  return pasteOf({
    ...fields,
    content_json: contentJson,
    highlight: fields['highlight'] === 1,
    burn_after_read: fields['burn_after_read'] === 1,
    encrypted: fields['encrypted'] === 1,
  } as Row);
}
