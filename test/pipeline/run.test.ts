import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { json, type Reply } from '../../src/http/reply.ts';
import { RequestContext } from '../../src/pipeline/context.ts';
import { runSide, type Side, type Step } from '../../src/pipeline/run.ts';

class Ctx extends RequestContext {
  readonly trail: string[] = [];
}

const request = { method: 'GET', headers: {} } as IncomingMessage;
const start = (s: Side<Ctx>): Ctx => s.context(request, '/x', '', '127.0.0.1', 'req-1');
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
    context: (req, path, rawQuery, ip, id) => new Ctx(req, path, rawQuery, ip, id, {}),
    steps,
    refuse: (ctx, err) => json({ refused: err instanceof Error ? err.message : String(err), trail: ctx.trail }, 400),
  };
}

const mark = (name: string): Step<Ctx> => (ctx) => void ctx.trail.push(name);
const later = (name: string): Step<Ctx> => async (ctx) => void ctx.trail.push(name);
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
});
