import type { Receipt } from './paste.ts';

/**
 * Why the paste rules refused. Each side turns a kind into its status once
 * (pipeline/refusal.ts); nothing branches on the message, which is for people.
 */
export type PasteFailure =
  /** No such paste, or a private one that is not the viewer's: the two look the same. */
  | 'not_found'
  | 'expired'
  | 'burned'
  | 'password_required'
  | 'wrong_password'
  /** Too many wrong passwords from this client for this paste; `retryAfterSec` says when to try again. */
  | 'too_many_guesses'
  /** Too many short links from this client that named no paste it may see (README, Short links and health). */
  | 'too_many_misses'
  | 'not_owner'
  /** The paste is no longer the revision the writer named (`If-Match`). */
  | 'changed'
  /** The paste's file on the server cannot be read (told only to its owner and admins). */
  | 'damaged'
  /** No kept revision of that number (README, Revisions). */
  | 'no_revision'
  /** A one-time paste is read only whole, once: it has no revisions or history to read (README, Revisions). */
  | 'one_time'
  /** New content for an encrypted paste that is not an envelope (README, Encrypted pastes). */
  | 'envelope_required'
  /** `encrypted` would turn a paste's encryption on or off without the content in its new form. */
  | 'encryption_needs_content'
  /** This user already runs as many searches of My pastes as one may at once (paste/owned-search.ts). */
  | 'too_many_searches'
  /** The server already runs as many searches of My pastes as it runs at once, all users together. */
  | 'searches_busy'
  /** More files than MAX_FILES_PER_PASTE (README, Files). */
  | 'too_many_files'
  /** A file past MAX_FILE_BYTES (an encrypted paste's: past the envelope of a file that size). */
  | 'file_too_large'
  /** Two files of one paste would share a name. */
  | 'file_name_taken'
  /** `remove_file` names no file of the paste. */
  | 'no_such_file'
  /** The paste has no file of that name (file.php). */
  | 'file_not_found'
  /** A burned paste's file asked for without a live grant: none, another file's, used or past its time. */
  | 'grant_refused'
  /** The owner's files would pass USER_QUOTA_BYTES. */
  | 'quota_exceeded'
  /** An edit would leave neither text nor files. */
  | 'nothing_left';

const MESSAGES: Record<PasteFailure, string> = {
  not_found: 'Paste not found',
  expired: 'This paste has expired',
  burned: 'This paste was already burned (it was a one-time view)',
  password_required: 'Password required',
  wrong_password: 'Invalid password',
  too_many_guesses: 'Too many wrong passwords for this paste; try again later',
  too_many_misses: 'Too many short links from this address led nowhere; try again later',
  not_owner: 'Only the owner of this paste (or an admin) may change it',
  changed: 'The paste has changed since the revision named in If-Match; read it again',
  no_revision: 'This paste has no revision of that number',
  one_time:
    'A one-time paste keeps no revisions and shows no history: reading it (without revision) shows it once and ' +
    'burns it',
  encryption_needs_content:
    'encrypted changes only with new content: an encryption envelope with encrypted=1, plain text with encrypted=0',
  envelope_required:
    'This paste is encrypted: its new content must be an encryption envelope, or send encrypted=0 with plain text',
  too_many_searches: 'You already have searches running; wait for them to finish, then search again',
  searches_busy: 'The server is busy with other searches; try again in a moment',
  too_many_files: 'A paste holds at most MAX_FILES_PER_PASTE files',
  file_too_large: 'A file may hold at most MAX_FILE_BYTES bytes',
  file_name_taken: 'Two files of one paste cannot share a name',
  no_such_file: 'remove_file names no file of this paste',
  file_not_found: 'This paste has no file of that name',
  grant_refused:
    "This one-time paste's file can be fetched only once, by the reader who burned it, within ten minutes of the burn",
  quota_exceeded: "The owner's files would pass their quota (USER_QUOTA_BYTES)",
  nothing_left: 'A paste needs content or at least one file',
  damaged:
    "This paste's file on the server is damaged and cannot be read. Its owner or an admin can delete it; the " +
    "server's log names the file.",
};

export class PasteError extends Error {
  constructor(
    readonly kind: PasteFailure,
    /** For too_many_guesses: the budget's limit and when it can pay again. */
    readonly limit?: { perMinute: number; retryAfterSec: number },
    /** For burned, to its owner: when and how it was read (README, Burn receipts). */
    readonly receipt?: Receipt,
    /** For file_too_large: the message naming the limit (paste/files.ts, fileLimit). */
    message?: string,
  ) {
    super(message ?? MESSAGES[kind]);
  }
}
