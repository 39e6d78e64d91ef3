import type { Sql, TransactionSql } from 'postgres';
import { isUnavailable } from './guard.ts';
import { currentScope, type DbScope, type InFlight } from './scope.ts';

/**
 * What this module reaches of a driver's query (postgres/src/query.js): the function that
 * hands it to a connection when it is first awaited, its own reject, whether it was sent
 * (`state`, the connection's backend) and whether it is the statement running now.
 */
interface DriverQuery extends Promise<unknown> {
  handler: (q: DriverQuery) => void;
  resolve: (out: unknown) => void;
  reject: (err: unknown) => void;
  readonly tagged: boolean;
  readonly strings: TemplateStringsArray;
  readonly args: unknown[];
  readonly state: unknown;
  readonly active: boolean;
  readonly cursorFn?: unknown;
  cancel(): unknown;
}

/** Statements that change nothing; any other sent outside a transaction may have. */
const READS = /^\s*(select|show|explain|values)\b/i;
const LATE = 'the database did not answer in time';
/** How much sooner than the request's deadline the database refuses a transaction's statements itself. */
const DATABASE_FIRST_MS = 50;

const isQuery = (x: unknown): x is DriverQuery =>
  x instanceof Promise && typeof (x as Partial<DriverQuery>).handler === 'function';

const settled = (q: Promise<unknown>, done: (ok: boolean, err?: unknown) => void): void => {
  Promise.prototype.then.call(
    q,
    () => done(true),
    (err: unknown) => done(false, err),
  );
};

/**
 * Places on the pool's connections, handed out in order. A query waits here rather than in
 * the driver: one the driver queued or sent behind another on a busy connection could not
 * be taken back, and here it can be, so a request refused never has a statement sent later.
 */
class Places {
  #free: number;
  #waiting: ({ go: (() => void) | null } | undefined)[] = [];
  #head = 0;

  constructor(size: number) {
    this.#free = size;
  }

  /** Runs `go` when a place is free (at once if one is); answers the ticket to withdraw while it waits. */
  take(go: () => void): { go: (() => void) | null } {
    const ticket = { go: null as (() => void) | null };
    if (this.#free > 0) {
      this.#free--;
      go();
      return ticket;
    }
    ticket.go = go;
    this.#waiting.push(ticket);
    return ticket;
  }

  /** A place is free again: the next ticket still waiting takes it. */
  give(): void {
    while (this.#head < this.#waiting.length) {
      const ticket = this.#waiting[this.#head];
      this.#waiting[this.#head++] = undefined;
      const go = ticket?.go;
      if (go === null || go === undefined) continue;
      (ticket as { go: (() => void) | null }).go = null;
      this.#compact();
      go();
      return;
    }
    this.#compact();
    this.#free++;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * The pool as the stores use it (pg/open.ts): every query and transaction made through it
 * belongs to the scope of the request that made it (pg/scope.ts), takes one of `size`
 * places before it reaches the driver, and keeps the guard's promise that a refused
 * request changes nothing (pg/guard.ts):
 *
 * - once the scope has expired, a query not yet handed to the driver never is;
 * - every change is made in a transaction that checks the scope before its first statement
 *   and again before its COMMIT (a statement that may change something, made on its own,
 *   becomes a transaction of its own), so only a COMMIT already sent can take effect after
 *   the time is up, and the guard waits for it to say whether it did;
 * - a transaction's statements are limited by the database itself (statement_timeout and
 *   lock_timeout, local to the transaction) to a little less than the request's time left,
 *   and a statement still running when the scope expires gets the database's cancel.
 */
export function scopedSql(sql: Sql, size: number): Sql {
  const places = new Places(size);
  return new Proxy(sql, {
    apply(target, self, args) {
      const out: unknown = Reflect.apply(target, self, args);
      if (isQuery(out)) admit(target, out, currentScope(), places);
      return out;
    },
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (key === 'begin')
        return (...args: unknown[]) =>
          transaction(
            target,
            places,
            currentScope(),
            args.length > 1 ? String(args[0]) : '',
            args.at(-1) as (tx: TransactionSql) => unknown,
          );
      if (key === 'unsafe')
        return (...args: unknown[]) => {
          const out: unknown = Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
          if (isQuery(out)) admit(target, out, currentScope(), places);
          return out;
        };
      return value;
    },
  });
}

/**
 * Routes a query made outside a transaction through the places and its scope. One that may
 * change something, made in a scope, runs as a transaction of its own, so that it too
 * commits only while its request has time left.
 */
function admit(target: Sql, q: DriverQuery, scope: DbScope | undefined, places: Places): void {
  const send = q.handler;
  let ticket: { go: (() => void) | null } | null = null;
  const entry: InFlight = {
    cancel() {
      if (ticket?.go) {
        ticket.go = null;
        scope?.live.delete(entry);
        q.reject(scope?.refusal(LATE));
      } else if (q.active) q.cancel();
    },
    mayHaveWritten: false,
  };
  q.handler = (query) => {
    // A cursor keeps its connection from step to step, and settles differently: not placed.
    if (query.cursorFn !== undefined) return send(query);
    if (scope === undefined) {
      places.take(() => {
        settled(query, () => places.give());
        send(query);
      });
      return;
    }
    if (scope.expired) return query.reject(scope.refusal(LATE));
    if (query.tagged && !READS.test(query.strings[0] ?? '')) {
      transaction(target, places, scope, '', (tx) => tx(query.strings, ...(query.args as never[]))).then(
        query.resolve,
        query.reject,
      );
      return;
    }
    scope.live.add(entry);
    ticket = places.take(() => {
      settled(query, () => {
        scope.live.delete(entry);
        places.give();
      });
      send(query);
    });
  };
}

/**
 * `sql.begin([options,] fn)` through the places, its COMMIT only while the scope has time
 * left, its statements in the scope, and bounded by the database itself.
 */
function transaction(
  target: Sql,
  places: Places,
  scope: DbScope | undefined,
  options: string,
  fn: (tx: TransactionSql) => unknown,
): Promise<unknown> {
  // A function, not a narrowed field: the scope may expire while the transaction awaits.
  const expired = (): boolean => scope?.expired === true;
  if (scope?.expired === true) return Promise.reject(scope.refusal(LATE));
  let committing = false;
  let wrote = false;
  return new Promise((resolve, reject) => {
    let ticket: { go: (() => void) | null } | null = null;
    const entry: InFlight = {
      cancel() {
        if (!ticket?.go) return;
        ticket.go = null;
        scope?.live.delete(entry);
        reject(scope?.refusal(LATE));
      },
      get mayHaveWritten() {
        return committing && wrote;
      },
    };
    scope?.live.add(entry);
    ticket = places.take(() => {
      const body = async (tx: TransactionSql): Promise<unknown> => {
        if (expired()) throw scope?.refusal(LATE);
        if (scope?.busy === true && !/read only/i.test(options)) limit(tx, scope.deadline - performance.now());
        const x = fn(scopedTx(tx, scope, () => (wrote = true)));
        const out = await (Array.isArray(x) ? Promise.all(x) : x);
        // The last moment a refusal can still be a fact: past it, the COMMIT is sent.
        if (expired()) throw scope?.refusal(LATE);
        committing = true;
        return out;
      };
      const run = options === '' ? target.begin(body) : target.begin(options, body);
      settled(run, (ok, err) => {
        scope?.live.delete(entry);
        places.give();
        if (scope !== undefined && committing && wrote) {
          if (ok) scope.committed = true;
          // Lost after the COMMIT was sent: whether it was carried out cannot be known.
          else if (isUnavailable(err) && (err as { code?: unknown }).code !== '57014') scope.unknown = true;
        }
      });
      run.then(resolve, reject);
    });
  });
}

/**
 * Sets the transaction's statement_timeout and lock_timeout to a little less than the
 * request's time left, sent ahead of its first statement without waiting for the answer
 * (a failure fails the transaction, as the driver records it).
 */
function limit(tx: TransactionSql, leftMs: number): void {
  const ms = String(Math.max(1, Math.floor(leftMs - DATABASE_FIRST_MS)));
  void tx`select set_config('statement_timeout', ${ms}, true), set_config('lock_timeout', ${ms}, true)`.execute();
}

/** A transaction's sql with its statements in the scope: cancelled when it expires, refused after. */
function scopedTx(tx: TransactionSql, scope: DbScope | undefined, onWrite: () => void): TransactionSql {
  if (scope === undefined) return tx;
  return new Proxy(tx, {
    apply(target, self, args) {
      const out: unknown = Reflect.apply(target, self, args);
      if (!isQuery(out)) return out;
      const send = out.handler;
      const mayWrite = !READS.test(out.strings[0] ?? '');
      const entry: InFlight = {
        cancel: () => {
          if (out.active) out.cancel();
        },
        mayHaveWritten: false,
      };
      out.handler = (query) => {
        if (scope.expired) return query.reject(scope.refusal(LATE));
        if (mayWrite) onWrite();
        scope.live.add(entry);
        settled(query, () => scope.live.delete(entry));
        send(query);
      };
      return out;
    },
  });
}
