import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../src/config.ts';
import { openPgCli, openPgStorage, waitNotes } from '../../src/pg/open.ts';
import { startServer } from '../../src/server.ts';
import { freePort } from '../helpers/pg-cluster.ts';
import { ownCluster } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { until as poll } from '../helpers/until.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map(cleanup)));
const dataDir = async (): Promise<string> => {
  const d = await tempDataDir();
  dirs.push(d);
  return d;
};

/** Waits until `ok()` holds, checking every 50 ms, for at most `ms`. */
const until = (ok: () => boolean, ms: number, what: string): Promise<number> =>
  poll(ok, { timeoutMs: ms, what, everyMs: 50 });

test('start waiting for the database says so once, not at every attempt, on the server and in the CLI', async () => {
  const port = await freePort();
  const config = parseConfig({
    DATA_DIR: await dataDir(),
    DATABASE_URL: `postgres://paste@127.0.0.1:${port}/paste`,
    DATABASE_WAIT_SECONDS: '1',
  });
  const lines: string[] = [];
  const say = (m: string): void => void lines.push(m);
  await assert.rejects(openPgStorage({ config, now: Date.now, info: say, warn: say }), /cannot start/);
  assert.equal(lines.filter((l) => l.startsWith('waiting for the database: ')).length, 1, lines.join('\n'));
  assert.equal(lines.length, 1, lines.join('\n'));
  const notes: string[] = [];
  await assert.rejects(openPgCli(config, { note: (m) => notes.push(m) }), /cannot start/);
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(notes[0] ?? '', /^waiting for the database: .*ECONNREFUSED/);
});

test('waitNotes: 30 s of attempts four times a second make one line and a reminder every 10 s', () => {
  let t = 0;
  const lines: string[] = [];
  const onWait = waitNotes(
    (m) => lines.push(m),
    () => t,
  );
  for (; t < 30_000; t += 250) onWait('the database cannot be reached (ECONNREFUSED)');
  assert.deepEqual(lines, [
    'waiting for the database: the database cannot be reached (ECONNREFUSED)',
    'still waiting for the database after 10 s: the database cannot be reached (ECONNREFUSED)',
    'still waiting for the database after 20 s: the database cannot be reached (ECONNREFUSED)',
  ]);
});

test('an outage while serving is told once when it begins and once when it ends, not again by probes sent during it', async () => {
  const db = await ownCluster();
  const timeoutMs = 2_000;
  const config = parseConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: await dataDir(),
    DATABASE_URL: db.url,
    DATABASE_TIMEOUT_MS: String(timeoutMs),
  });
  const lines: string[] = [];
  const say = (m: string): void => void lines.push(m);
  const server = await startServer(config, { info: say, warn: say, logError: (err) => say(String(err)) });
  try {
    const down = (): number => lines.filter((l) => l.includes('does not answer')).length;
    const up = (): number => lines.filter((l) => l.includes('answers again')).length;
    db.stop();
    await until(() => down() === 1, 10_000, 'the outage to be told');
    // An outage of a few seconds: the probes sent during it wait out DATABASE_TIMEOUT_MS. Its
    // length is the scenario (several probes fail in it), so real time passes.
    await sleep(2_000);
    db.start();
    await until(() => up() === 1, 20_000, 'the end of the outage to be told');
    // Every probe sent before the end has settled by now: nothing more being said can only be
    // seen once DATABASE_TIMEOUT_MS, their longest wait, has passed.
    await sleep(timeoutMs + 500);
    assert.equal(down(), 1, lines.join('\n'));
    assert.equal(up(), 1, lines.join('\n'));
  } finally {
    await server.close();
  }
});
