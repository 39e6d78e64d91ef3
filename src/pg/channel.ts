import type { ListenMeta, Sql } from 'postgres';

/** What a listener is told: each notification's payload, and each time LISTEN is (again) in place. */
export interface ChannelEvents {
  notified(payload: string): void;
  /** LISTEN took effect, at start or after the driver reconnected: what was announced meanwhile is lost. */
  listened(): void;
}

/**
 * One LISTEN on a channel (the accounts', the pastes'), through the driver's own listen
 * connection. The driver re-listens after a dropped connection and says so (`listened`),
 * but does not say when it drops: whoever relies on the notifications also checks by other
 * means that none was lost (pg/accounts.ts reads a version, pg/paste-cache.ts pings itself).
 */
export class Channel {
  #listener: ListenMeta | null = null;
  /** This listen's identity: a callback of an earlier one, stopped since, is ignored. */
  #turn: object | null = null;
  #listening = false;
  #closed = false;

  constructor(
    private readonly sql: Sql,
    readonly name: string,
    private readonly events: ChannelEvents,
  ) {}

  /** Whether LISTEN is in place, as far as we know (the driver says when, not when it drops). */
  get listening(): boolean {
    return this.#listening;
  }

  /**
   * Starts listening. False when LISTEN cannot be had (as through a pooler in transaction
   * mode, or with the database away): the caller then does without notifications.
   */
  async start(): Promise<boolean> {
    if (this.#closed) return false;
    if (this.#turn !== null) return true;
    const turn = {};
    this.#turn = turn;
    const onListen = (): void => {
      if (this.#turn !== turn) return;
      this.#listening = true;
      this.events.listened();
    };
    const onNotify = (payload: string): void => {
      if (this.#turn === turn) this.events.notified(payload);
    };
    let listener: ListenMeta;
    try {
      listener = await this.sql.listen(this.name, onNotify, onListen);
    } catch {
      // Any failure to listen leaves the caller on its fallback, which is always correct.
      if (this.#turn === turn) this.#turn = null;
      return false;
    }
    // Stopped while it started.
    if (this.#turn !== turn) {
      await listener.unlisten();
      return false;
    }
    this.#listener = listener;
    return true;
  }

  /** Stops listening (it may be started again). */
  async stop(): Promise<void> {
    const listener = this.#listener;
    this.#turn = null;
    this.#listener = null;
    this.#listening = false;
    await listener?.unlisten();
  }

  /** Stops for good; the pool is the caller's to end (the driver keeps the listen connection open until then). */
  close(): Promise<void> {
    this.#closed = true;
    return this.stop();
  }
}
