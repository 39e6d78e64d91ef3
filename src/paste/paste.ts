import type { PasswordHash } from '../auth/passwords.ts';

export const PRIVACIES = ['public', 'unlisted', 'private'] as const;
export type Privacy = (typeof PRIVACIES)[number];

/** A paste as stored on disk (one JSON file each). Times are epoch milliseconds. */
export interface Paste {
  v: 1;
  hash: string;
  title: string;
  content: string;
  language: string;
  privacy: Privacy;
  highlight: 0 | 1;
  burn_after_read: 0 | 1;
  /** Set once a one-time paste has been read; its content is wiped then. */
  burned: boolean;
  password: PasswordHash | null;
  owner_id: number;
  created_at: number;
  updated_at: number;
  expire_at: number | null;
  view_count: number;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the SPEC's timestamp format. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export const isExpired = (p: Paste, now: number): boolean => p.expire_at !== null && p.expire_at <= now;
