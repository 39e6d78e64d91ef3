import type { Signer } from '../crypto/signature.ts';
import { FILE_GRANT_MS, type PasteFile } from './files.ts';
import type { Paste } from './paste.ts';

/**
 * The grant the reader who burns a one-time paste is handed for each of its files (README,
 * Files): an HMAC with the server key of the paste, the burn's time and the file, so it
 * names one file of one burn. It is good for FILE_GRANT_MS and once: the burned record marks
 * the file fetched when it is used (PasteService.grantedFile), on every instance alike.
 */
const PURPOSE = 'file-grant';

/** When `p` was burned: its receipt's time (the record's own time for one burned before receipts). */
export const burnedAt = (p: Pick<Paste, 'receipt' | 'updated_at'>): number => p.receipt?.at ?? p.updated_at;

const signed = (hash: string, at: number, f: Pick<PasteFile, 'name' | 'sha256'>): string =>
  `${hash}\0${at}\0${f.name}\0${f.sha256}`;

/** The grant for file `f` of paste `hash`, burned at `at`. */
export const fileGrant = (signer: Signer, hash: string, at: number, f: Pick<PasteFile, 'name' | 'sha256'>): string =>
  signer.sign(PURPOSE, signed(hash, at, f));

/** Whether `grant` is `f`'s of burned paste `p`, unused and in time. */
export function isLiveGrant(signer: Signer, p: Paste, f: PasteFile, grant: string, now: number): boolean {
  const at = burnedAt(p);
  return (
    p.burned &&
    f.fetched === undefined &&
    now < at + FILE_GRANT_MS &&
    signer.verify(PURPOSE, signed(p.hash, at, f), grant)
  );
}
