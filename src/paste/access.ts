import type { Paste } from './paste.ts';

/** Who is asking, as the paste rules see it: a user (through a token or a web session), or nobody. */
export interface Viewer {
  userId: number;
  isAdmin: boolean;
}

/** The owner and admins may change a paste, read it without its password, and see it when private. */
export const owns = (v: Viewer | null, p: Pick<Paste, 'owner_id'>): boolean =>
  v !== null && (v.isAdmin || v.userId === p.owner_id);

/** A private paste that is not yours looks exactly like one that does not exist. */
export const canSee = (v: Viewer | null, p: Pick<Paste, 'privacy' | 'owner_id'>): boolean =>
  p.privacy !== 'private' || owns(v, p);

/** True when this viewer must supply the paste's password to read it. */
export const needsPassword = (p: Pick<Paste, 'password' | 'owner_id'>, v: Viewer | null): boolean =>
  p.password !== null && !owns(v, p);
