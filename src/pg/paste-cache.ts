import type { Sql } from 'postgres';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PasteCache } from '../cache/paste-cache.ts';
import type { Paste } from '../paste/paste.ts';
import { Channel } from './channel.ts';

/** The channel every committed change to a paste is announced on, its hash the payload (migration paste-notify). */
export const PASTES_CHANNEL = 'pastes';
/** How often a server sends itself a ping through the channel, to learn that no announcement was lost. */
export const PING_MS = 200;
/**
 * A cached paste is handed out only while the newest ping heard back was sent at most this
 * long ago: a change announced but lost is served for no longer (README, Running on PostgreSQL).
 */
export const TRUST_MS = 800;

/** A read of one paste from the database under way; a change to it announced meanwhile marks it stale. */
interface Reading {
  stale: boolean;
  read: Promise<Paste | null>;
}

export interface SharedCacheOptions {
  /** Monotonic milliseconds. */
  clock?: () => number;
  pingMs?: number;
}

/**
 * The PostgreSQL backend's paste cache (pg/pastes.ts reads through it), kept true to a
 * database that other servers and the CLI change too. Every committed change to a paste is
 * announced (a trigger: NOTIFY 'pastes' with its hash); each server LISTENs and drops that
 * paste. An announcement lost to a dropped listen connection is covered by a ping: every
 * PING_MS the server announces a ping of its own, and since PostgreSQL delivers
 * notifications in commit order, hearing it back means every change committed before it
 * was heard too. While the channel is not up, or the newest ping heard back was sent more
 * than TRUST_MS ago, the cache is dropped and bypassed: every read asks the database.
 * Nothing is cached but what a read found (no absences, no copy of one's own change),
 * and a read is kept only when no change to its paste was heard while it ran. A fold of
 * view counts is announced with the new count, which the cache keeps beside its copy.
 */
export class SharedPasteCache {
  readonly #cache: PasteCache<Paste>;
  readonly #reading = new Map<string, Reading>();
  readonly #channel: Channel;
  readonly #clock: () => number;
  readonly #pingMs: number;
  /** Our pings' payloads start with this; a hash never holds a '~'. */
  readonly #pingPrefix = `~${randomBytes(6).toString('hex')}:`;
  /** When the newest ping heard back was sent (or LISTEN took effect); -Infinity: never. */
  #heardAt = Number.NEGATIVE_INFINITY;
  #pinging = false;
  #timer: NodeJS.Timeout | null = null;
  /** Moves on each time the cache is dropped: a read begun before is not kept. */
  #epoch = 0;
  #hits = 0;
  #misses = 0;

  constructor(
    private readonly sql: Sql,
    maxBytes: number,
    opts: SharedCacheOptions = {},
  ) {
    this.#cache = new PasteCache<Paste>(maxBytes);
    this.#clock = opts.clock ?? (() => performance.now());
    this.#pingMs = opts.pingMs ?? PING_MS;
    this.#channel = new Channel(sql, PASTES_CHANNEL, {
      notified: (payload) => this.#notified(payload),
      listened: () => {
        // What was announced while the connection was down is lost: start afresh, trusted from now on.
        this.#drop();
        this.#heardAt = this.#clock();
      },
    });
  }

  /** Starts listening and pinging; false (the cache stays bypassed) when LISTEN cannot be had. */
  async start(): Promise<boolean> {
    this.#timer ??= setInterval(() => this.#ping(), this.#pingMs);
    this.#timer.unref();
    return this.#channel.start();
  }

  /** Stops listening (the cache is dropped and bypassed from now on); `start` may follow. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#heardAt = Number.NEGATIVE_INFINITY;
    this.#drop();
    await this.#channel.stop();
  }

  /** Stops for good; the pool is the caller's to end. */
  async close(): Promise<void> {
    await this.stop();
    await this.#channel.close();
  }

  /** The paste as the cache holds it, or undefined (not held, or the cache cannot be trusted now). */
  cached(hash: string): Paste | undefined {
    if (!this.#trusted()) return undefined;
    const p = this.#cache.get(hash);
    if (p !== undefined) this.#hits++;
    return p;
  }

  /**
   * The paste through the cache: `load` asks the database, once for any number of readers at
   * a time; `cacheable` tells it whether what it finds is meant for the cache.
   */
  get(hash: string, load: (cacheable: boolean) => Promise<Paste | null>): Promise<Paste | null> {
    const hit = this.cached(hash);
    if (hit !== undefined) return Promise.resolve(hit);
    const going = this.#reading.get(hash);
    // As on the data folder, a read that joins one under way counts as a hit (README, Metrics).
    if (going !== undefined) {
      this.#hits++;
      return going.read;
    }
    this.#misses++;
    if (!this.#trusted()) return load(false);
    const reading: Reading = { stale: false, read: Promise.resolve(null) };
    const epoch = this.#epoch;
    reading.read = load(true).then(
      (p) => {
        if (this.#reading.get(hash) === reading) this.#reading.delete(hash);
        // A change heard while it read (or the cache dropped) may be newer than what it found.
        if (p !== null && !reading.stale && epoch === this.#epoch && this.#trusted()) this.#cache.set(hash, p);
        return p;
      },
      (err: unknown) => {
        if (this.#reading.get(hash) === reading) this.#reading.delete(hash);
        throw err;
      },
    );
    this.#reading.set(hash, reading);
    return reading.read;
  }

  /** Forgets a paste this server changed (or whose views it folded in), as its announcement would. */
  forget(hash: string): void {
    this.#cache.delete(hash);
    const going = this.#reading.get(hash);
    if (going === undefined) return;
    going.stale = true;
    this.#reading.delete(hash);
  }

  /**
   * A paste's views were folded into its row (by this server, or announced by another): a
   * cached copy keeps the new count beside it, nothing else having changed; a read under way
   * is not kept. The copy itself stays: a new object for every fold of every paste read
   * would be rendered again on its next read and left to the old generation's collector.
   */
  recount(hash: string, viewCount: number): void {
    const going = this.#reading.get(hash);
    if (going !== undefined) {
      going.stale = true;
      this.#reading.delete(hash);
    }
    this.#cache.recount(hash, viewCount);
  }

  /** The newest count of the paste's row that `recount` told of, if it holds the paste (0: none). */
  viewCount(hash: string): number | undefined {
    return this.#cache.viewCount(hash);
  }

  /** Reads it answered, reads that went to the database, what it holds (/metrics). */
  get stats(): { hits: number; misses: number; bytes: number; entries: number } {
    return { hits: this.#hits, misses: this.#misses, bytes: this.#cache.bytes, entries: this.#cache.size };
  }

  /**
   * Whether every notification committed more than TRUST_MS ago has reached this server, on
   * any channel: PostgreSQL delivers one session's notifications in commit order, and every
   * LISTEN of the pool shares the driver's one listen connection (pg/limiter.ts relies on it).
   */
  heardRecently(): boolean {
    return this.#channel.listening && this.#clock() - this.#heardAt <= TRUST_MS;
  }

  /** Whether the channel is up and heard our own ping recently; if not, what is cached goes. */
  #trusted(): boolean {
    if (this.#channel.listening && this.#clock() - this.#heardAt <= TRUST_MS) return true;
    if (this.#cache.size > 0 || this.#reading.size > 0) this.#drop();
    return false;
  }

  #drop(): void {
    this.#epoch++;
    this.#cache.clear();
    for (const going of this.#reading.values()) going.stale = true;
    this.#reading.clear();
  }

  #notified(payload: string): void {
    if (payload.startsWith('+')) {
      // A fold's new counts (pg/views.ts foldAnnouncements).
      const words = payload.slice(1).split(' ');
      for (let i = 0; i + 1 < words.length; i += 2) this.recount(words[i] as string, Number(words[i + 1]));
    } else if (!payload.startsWith('~')) {
      const space = payload.indexOf(' ');
      if (space === -1) this.forget(payload);
      else this.recount(payload.slice(0, space), Number(payload.slice(space + 1)));
    } else if (payload.startsWith(this.#pingPrefix)) {
      // Another server's ping says nothing of our connection.
      const sentAt = Number(payload.slice(this.#pingPrefix.length));
      if (sentAt > this.#heardAt) this.#heardAt = sentAt;
    }
  }

  /** Announces a ping stamped with the time before it is sent; one at a time, a failed one just not heard. */
  #ping(): void {
    if (this.#pinging || !this.#channel.listening) return;
    this.#pinging = true;
    const payload = `${this.#pingPrefix}${this.#clock()}`;
    this.sql
      .notify(PASTES_CHANNEL, payload)
      .catch(() => undefined)
      .finally(() => (this.#pinging = false));
  }
}
