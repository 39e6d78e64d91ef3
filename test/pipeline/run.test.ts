import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { json, type Reply } from '../../src/http/reply.ts';
import { RequestContext } from '../../src/pipeline/context.ts';
import { InFlight, runSide, serve, TurnQueue, type Side, type Step } from '../../src/pipeline/run.ts';

class Ctx extends RequestContext {
  readonly trail: string[] = [];
}

const request = { method: 'GET', headers: {} } as IncomingMessage;
const start = (s: Side<Ctx>): Ctx => s.context(request, '/x', '', '127.0.0.1', '127.0.0.1', 'req-1');
/** The reply a side gives, once it gives it. */
const run = (s: Side<Ctx>): Promise<Reply> => new Promise((resolve) => runSide(s, start(s), resolve));
/** The reply a side gives before runSide returns, or undefined when it has to wait. */
const runNow = (s: Side<Ctx>): Reply | undefined => {
  let got: Reply | undefined;
  runSide(s, start(s), (r) => (got = r));
  return got;
};

function side(steps: Step<Ctx>[]): Side<Ctx> {
  return {
    context: (req, path, rawQuery, ip, clientKey, id) => new Ctx(req, path, rawQuery, ip, clientKey, id, {}),
    steps,
    refuse: (ctx, err) => json({ refused: err instanceof Error ? err.message : String(err), trail: ctx.trail }, 400),
  };
}

const mark =
  (name: string): Step<Ctx> =>
  (ctx) =>
    void ctx.trail.push(name);
const later =
  (name: string): Step<Ctx> =>
  async (ctx) =>
    void ctx.trail.push(name);
const answer = (ctx: Ctx): Reply => json({ trail: ctx.trail });

describe('runSide', () => {
  test('runs the steps in order until one answers', async () => {
    const s = side([mark('a'), later('b'), mark('c'), answer, mark('never')]);
    const reply = await run(s);
    assert.deepEqual(reply, json({ trail: ['a', 'b', 'c'] }));
  });

  test('steps that return at once answer at once, without a promise', () => {
    const s = side([mark('a'), mark('b'), answer]);
    assert.deepEqual(runNow(s), json({ trail: ['a', 'b'] }), 'answered before runSide returned');
    assert.equal(runNow(side([mark('a'), later('b'), answer])), undefined, 'a step that waits makes it wait');
  });

  test('a step may answer early, and the rest do not run', async () => {
    const early: Step<Ctx> = () => json({ early: true }, 302);
    const s = side([mark('a'), early, mark('never'), answer]);
    assert.deepEqual(await run(s), json({ early: true }, 302));
  });

  test('whatever a step throws or rejects with becomes the side’s refusal, with the context so far', async () => {
    const boom: Step<Ctx> = () => {
      throw new Error('sync');
    };
    const reject: Step<Ctx> = async () => Promise.reject(new Error('async'));
    const s1 = side([mark('a'), boom, answer]);
    assert.deepEqual(runNow(s1), json({ refused: 'sync', trail: ['a'] }, 400));
    const s2 = side([mark('a'), later('b'), reject, answer]);
    assert.deepEqual(await run(s2), json({ refused: 'async', trail: ['a', 'b'] }, 400));
  });

  test('a list whose steps all pass on is a fault, refused like any other', async () => {
    const s = side([mark('a')]);
    assert.deepEqual(await run(s), json({ refused: 'no step answered the request', trail: ['a'] }, 400));
  });

  test('files a request spooled are removed before its answer, whether a handler failed or an earlier step answered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-uploads-'));
    for (const ending of ['fails', 'refuses'] as const) {
      const path = join(dir, `upload-${ending}`);
      await writeFile(path, 'spooled bytes');
      const spool: Step<Ctx> = async (ctx) => {
        ctx.uploads = [{ name: 'a.bin', type: 'application/octet-stream', size: 13, sha256: '', path }];
        return undefined;
      };
      const last: Step<Ctx> =
        ending === 'fails'
          ? () => {
              throw new Error('the store broke');
            }
          : () => json({ login: true }, 303);
      const reply = await new Promise<Reply>((resolve) =>
        runSide(side([spool, last]), start(side([])), (r) => {
          // Checked as the answer is handed over, before anything else can run.
          assert.ok(!existsSync(path), `${ending}: the spooled file is gone when the answer is written`);
          resolve(r);
        }),
      );
      assert.equal(reply.status, ending === 'fails' ? 400 : 303);
    }
    await rm(dir, { recursive: true });
  });
});

/** Queues work that records itself, then asks for a write that throws and one that records itself. */
function queueWorkWithAFailingWrite(turns: TurnQueue, seen: string[]): void {
  turns.run(() => {
    seen.push('work 2');
    turns.afterWork(() => {
      throw new Error('write failed');
    });
    turns.afterWork(() => seen.push('write 2'));
  });
}

describe('TurnQueue', () => {
  test('runs what a turn queued in its check phase, in order, after everything else that turn does', async () => {
    const seen: string[] = [];
    const turns = new TurnQueue(() => seen.push('fault'));
    turns.run(() => seen.push('first'));
    turns.run(() => seen.push('second'));
    seen.push('queued');
    process.nextTick(() => seen.push('tick'));
    void Promise.resolve().then(() => seen.push('microtask'));
    setImmediate(() => seen.push('an immediate set after'));
    assert.deepEqual(seen, ['queued'], 'nothing runs while it is queued');
    await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    // Ticks and microtasks (the rest of the turn's callbacks) first, in whichever order they
    // run; then the queue, whole.
    assert.deepEqual(new Set(seen.slice(0, 3)), new Set(['queued', 'tick', 'microtask']));
    assert.deepEqual(seen.slice(3), ['first', 'second', 'an immediate set after']);
  });

  test('a fault in one piece of work is logged and the rest still run; work queued while draining runs in a later turn', async () => {
    const seen: string[] = [];
    const faults: unknown[] = [];
    const turns = new TurnQueue((err) => faults.push(err));
    turns.run(() => {
      throw new Error('boom');
    });
    turns.run(() => {
      seen.push('after the fault');
      turns.run(() => seen.push('queued while draining'));
    });
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['after the fault']);
    assert.deepEqual(
      faults.map((e) => (e as Error).message),
      ['boom'],
    );
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['after the fault', 'queued while draining']);
  });

  test('holds the writes its work asks for until all the work of the turn has run, then makes them in order', async () => {
    const seen: string[] = [];
    const faults: unknown[] = [];
    const turns = new TurnQueue((err) => faults.push(err));
    turns.afterWork(() => seen.push('outside a drain: at once'));
    turns.run(() => {
      seen.push('work 1');
      turns.afterWork(() => seen.push('write 1'));
    });
    queueWorkWithAFailingWrite(turns, seen);
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['outside a drain: at once', 'work 1', 'work 2', 'write 1', 'write 2']);
    assert.deepEqual(
      faults.map((e) => (e as Error).message),
      ['write failed'],
    );
    turns.afterWork(() => seen.push('after the drain: at once'));
    assert.equal(seen.at(-1), 'after the drain: at once');
  });

  test('a log that fails in turn strands neither the rest of the work nor any write, then or later', async () => {
    const seen: string[] = [];
    const turns = new TurnQueue(() => {
      throw new Error('the log failed too');
    });
    turns.run(() => {
      turns.afterWork(() => seen.push('write 1'));
      throw new Error('work failed');
    });
    queueWorkWithAFailingWrite(turns, seen);
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['work 2', 'write 1', 'write 2']);
    turns.afterWork(() => seen.push('later: at once'));
    turns.run(() => turns.afterWork(() => seen.push('next turn')));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.slice(3), ['later: at once', 'next turn']);
  });
});

/** Serves one GET with `served` on a real socket; answers its status. */
async function once(served: ReturnType<typeof serve>, listener?: () => void): Promise<number> {
  const server = createServer((req, res) => {
    served(req, res, '/x', '', '127.0.0.1', '127.0.0.1', 'req-7');
    listener?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const r = get({ host: '127.0.0.1', port, path: '/x' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', reject);
      r.setTimeout(5_000, () => r.destroy(new Error('no answer')));
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('serve', () => {
  test('a side whose refusal itself fails still answers 500, logs the fault with the request id, and leaves the in-flight count', async () => {
    const faults: [string, string | undefined][] = [];
    const broken: Side<Ctx> = {
      ...side([
        () => {
          throw new Error('step failed');
        },
      ]),
      refuse: () => {
        throw new Error('refusal failed');
      },
    };
    const inFlight = new InFlight();
    for (const turns of [undefined, new TurnQueue(() => undefined)]) {
      const served = serve(broken, (err, id) => faults.push([(err as Error).message, id]), undefined, inFlight, turns);
      assert.equal(await once(served), 500);
    }
    assert.deepEqual(faults, [
      ['refusal failed', 'req-7'],
      ['refusal failed', 'req-7'],
    ]);
    assert.equal(inFlight.size, 0, 'nothing is left in flight');
  });

  test('a log line or count that fails is reported with the request id, after the answer, and leaves the in-flight count', async () => {
    const faults: [string, string | undefined][] = [];
    const inFlight = new InFlight();
    for (const turns of [undefined, new TurnQueue(() => faults.push(['no id', undefined]))]) {
      const served = serve(
        side([() => json({ ok: true })]),
        (err, id) => faults.push([(err as Error).message, id]),
        () => {
          throw new Error('count failed');
        },
        inFlight,
        turns,
      );
      assert.equal(await once(served), 200);
    }
    assert.deepEqual(faults, [
      ['count failed', 'req-7'],
      ['count failed', 'req-7'],
    ]);
    assert.equal(inFlight.size, 0);
  });

  test('with a TurnQueue an answer is written once all the work its turn queued has run', async () => {
    const seen: string[] = [];
    const turns = new TurnQueue(() => undefined);
    const s = side([
      () => {
        seen.push('steps');
        return json({ ok: true });
      },
    ]);
    const served = serve(
      s,
      () => undefined,
      () => seen.push('written'),
      undefined,
      turns,
    );
    assert.equal(await once(served, () => turns.run(() => seen.push('later work of the turn'))), 200);
    assert.deepEqual(seen, ['steps', 'later work of the turn', 'written']);
  });

  test('with a TurnQueue the steps start after the request event, unless the side says the request waits for that phase anyway', async () => {
    for (const waits of [false, true]) {
      let returned = false;
      let startedLate: boolean | undefined;
      const s: Side<Ctx> = {
        ...side([
          () => {
            startedLate = returned;
            return json({ ok: true });
          },
        ]),
        waitsForCheckPhase: () => waits,
      };
      const served = serve(s, () => undefined, undefined, undefined, new TurnQueue(() => undefined));
      assert.equal(await once(served, () => (returned = true)), 200);
      assert.equal(startedLate, !waits, waits ? 'run at once' : 'queued for the check phase');
    }
  });
});
