import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reply } from '../http/reply.ts';
import { discardUploads } from '../http/multipart.ts';
import { respond } from '../http/respond.ts';
import type { RequestContext } from './context.ts';

/**
 * One check or action on the request path. A step fills in the context (the route, the
 * principal, the body) and returns nothing to pass the request on, returns a reply to
 * answer it there (a login redirect), or throws to refuse it. The last step answers.
 */
export type Step<C> = (ctx: C) => Reply | undefined | Promise<Reply | undefined>;

/**
 * A side of the app (the API, the web pages): its ordered steps, which are the order in
 * which the README says checks happen, and how it answers an error and finishes a request.
 */
export interface Side<C extends RequestContext> {
  /** This side's context for a request (the path and query split from its URL, the client's address). */
  context(req: IncomingMessage, path: string, rawQuery: string, ip: string, clientKey: string, id: string): C;
  steps: readonly Step<C>[];
  /** The answer for whatever a step threw: this side's envelope or page. */
  refuse(ctx: C, err: unknown): Reply;
  /** Runs once the answer has been handed to the socket, whatever it was (the API's log line). */
  done?(ctx: C, reply: Reply): void;
  /**
   * Whether this request's steps wait for the check phase of the loop's turn themselves (a
   * web session's accounts check): `serve` then does not queue it for that phase (TurnQueue),
   * which would put its own wait off to the next turn.
   */
  waitsForCheckPhase?(ctx: C): boolean;
}

/**
 * Runs a side's steps in order until one answers, and hands `answer` that reply, or the
 * side's refusal of whatever a step threw. Steps that return at once cost one call each,
 * and then `answer` is called before this returns: a promise is made only where a step
 * really waits (the hot read path stays synchronous as far as it can).
 */
export function runSide<C extends RequestContext>(side: Side<C>, ctx: C, answer: (reply: Reply) => void): void {
  // Whatever the answer (kept, refused by any step, failed), what the request spooled and the
  // handler did not keep is gone before it is written (README, Files).
  const settle = (reply: Reply): void => {
    if (ctx.uploads.length === 0) answer(reply);
    else void discardUploads(ctx.uploads).then(() => answer(reply));
  };
  const refuse = (err: unknown): void => settle(side.refuse(ctx, err));
  let out: Reply | Promise<Reply>;
  try {
    out = runSteps(side.steps, ctx, 0);
  } catch (err) {
    refuse(err);
    return;
  }
  if (out instanceof Promise) out.then(settle, refuse);
  else answer(out);
}

function runSteps<C>(steps: readonly Step<C>[], ctx: C, from: number): Reply | Promise<Reply> {
  for (let i = from; i < steps.length; i++) {
    const out = (steps[i] as Step<C>)(ctx);
    if (out === undefined) continue;
    if (out instanceof Promise) return out.then((r) => (r === undefined ? runSteps(steps, ctx, i + 1) : r));
    return out;
  }
  throw new Error('no step answered the request');
}

/**
 * Requests a side is working on, from their context to their log line: at shutdown, one
 * whose connection was cut at the deadline still gets its line (README, Configuration).
 */
export class InFlight {
  #count = 0;
  #idle: (() => void)[] = [];

  start(): void {
    this.#count++;
  }

  /** Requests started and not yet finished. */
  get size(): number {
    return this.#count;
  }

  end(): void {
    if (--this.#count > 0 || this.#idle.length === 0) return;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Resolves once no request is in flight, or after `maxMs` whatever is left. */
  settled(maxMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** A side ready to serve requests. */
export type Served = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  rawQuery: string,
  ip: string,
  clientKey: string,
  id: string,
) => void;

/** Where unexpected faults go (the server's own log), with the id of the request that met them. */
export type FaultLog = (err: unknown, requestId?: string) => void;

/**
 * Work held for the check phase of the event loop's turn, run there in the order it came.
 * A side whose requests would otherwise be answered at once, inside the read that brought
 * each, answers them here: all the requests one turn read, one after another, after the
 * reading. Under load that is measurably cheaper (bench/README.md): a client waiting
 * for many answers is woken once for a run of them, not once for each, and the wake-up is
 * paid for in the writer's system calls. An idle server's request waits for no more than
 * the rest of its turn.
 */
export class TurnQueue {
  #queued: (() => void)[] = [];
  /** Writes held while the queue drains, or null when it is not draining. */
  #writes: (() => void)[] | null = null;

  constructor(private readonly logError: FaultLog) {}

  run(work: () => void): void {
    this.#queued.push(work);
    if (this.#queued.length === 1) setImmediate(this.#drain);
  }

  /**
   * Runs `write` once all the work of the turn has run, when called from that work; at
   * once otherwise. Answers then leave back to back, after all of them were made.
   */
  afterWork(write: () => void): void {
    if (this.#writes === null) write();
    else this.#writes.push(write);
  }

  readonly #drain = (): void => {
    const queued = this.#queued;
    this.#queued = [];
    const writes: (() => void)[] = [];
    this.#writes = writes;
    try {
      for (const work of queued) this.#safely(work);
    } finally {
      this.#writes = null;
      for (const write of writes) this.#safely(write);
    }
  };

  #safely(work: () => void): void {
    try {
      work();
    } catch (err) {
      // Sides answer their own errors; this is only so that one fault cannot strand the
      // rest, nor can a log that fails in turn.
      try {
        this.logError(err);
      } catch {
        // Nothing more can be said about it.
      }
    }
  }
}

/**
 * Serves requests with `side`: makes its context, runs its steps, writes the answer with
 * the request's headers and cookies, then lets the side finish (its log line) and
 * `observe` count it (README, Metrics), once. With `turns`, the steps start in the check
 * phase of the turn (TurnQueue); the request counts as in flight from its arrival.
 */
export function serve<C extends RequestContext>(
  side: Side<C>,
  logError: FaultLog,
  observe?: (ctx: C, reply: Reply) => void,
  inFlight?: InFlight,
  turns?: TurnQueue,
): Served {
  return (req, res, path, rawQuery, ip, clientKey, id) => {
    inFlight?.start();
    const ctx = side.context(req, path, rawQuery, ip, clientKey, id);
    let finished = false;
    const finish = (reply: Reply): void => {
      finished = true;
      if (turns === undefined) write(reply);
      else turns.afterWork(() => write(reply));
    };
    const write = (reply: Reply): void => {
      try {
        respond(res, reply, ctx.headers, ctx.setCookies);
      } catch (err) {
        // The side answers every error itself; reaching here means writing the answer failed.
        logError(err, ctx.id);
        if (!res.headersSent) res.writeHead(500).end();
      } finally {
        try {
          side.done?.(ctx, reply);
          observe?.(ctx, reply);
        } catch (err) {
          // Its log line or its count failed: the fault is reported with the request's id.
          logError(err, ctx.id);
        } finally {
          inFlight?.end();
        }
      }
    };
    const run = (): void => {
      try {
        runSide(side, ctx, finish);
      } catch (err) {
        // The side's own refusal failed (or its log line did): the request still gets an
        // answer, and leaves the in-flight count, rather than waiting for nothing.
        logError(err, ctx.id);
        if (finished) return;
        if (!res.headersSent) res.writeHead(500).end();
        inFlight?.end();
      }
    };
    if (turns === undefined || side.waitsForCheckPhase?.(ctx) === true) run();
    else turns.run(run);
  };
}
