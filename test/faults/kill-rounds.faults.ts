import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseFile } from '../../src/store/paste-record.ts';
import { BACKEND } from '../helpers/backend.ts';
import { cleanup, makeToken, req, spawnServer, tempDataDir, type ProcessServer } from '../helpers/server.ts';

/**
 * `npm run test:faults`: the server is killed with SIGKILL at a random moment while eight
 * clients create, edit, delete and read pastes and race to read one-time pastes, then
 * started again on the same data, FAULT_ROUNDS times (20 by default). After every restart
 * each acknowledged write must be there byte for byte: a write in flight at the kill may
 * have landed or not, but nothing else; no one-time paste was ever given to two readers;
 * every paste file is whole; the scratch folder is empty.
 */
const ROUNDS = Number(process.env['FAULT_ROUNDS'] ?? 20);
const CLIENTS = 8;

/** What a paste may hold now: each text it may have, null for "deleted". One entry once certain. */
type Possible = Set<string | null>;

interface Totals {
  creates: number;
  edits: number;
  deletes: number;
  burnsRead: number;
  reads: number;
  inFlight: number;
  checked: number;
}

const text = (client: number, n: number): string =>
  `client ${client} #${n} ${randomBytes(randomInt(16, 1500)).toString('base64')}\n✓ ü\t"q"`;

test(`kill -9 during parallel writes, ${ROUNDS} rounds: every acknowledged write survives, nothing is torn, nothing burns twice`, {
  timeout: 15 * 60_000,
}, async () => {
  const dataDir = await tempDataDir();
  const token = await makeToken(dataDir);
  /** Each client's own pastes (only it edits or deletes them, so their history is sequential). */
  const owned: Map<string, Possible>[] = Array.from({ length: CLIENTS }, () => new Map());
  /** One-time pastes not yet read, and those a reader got: never a second reader. */
  const unread = new Set<string>();
  const givenOut = new Set<string>();
  const totals: Totals = { creates: 0, edits: 0, deletes: 0, burnsRead: 0, reads: 0, inFlight: 0, checked: 0 };
  let server: ProcessServer | null = null;

  try {
    for (let round = 0; round < ROUNDS; round++) {
      server = await spawnServer({ dataDir });
      await verify(server);
      let stop = false;
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(server as ProcessServer, c, () => stop));
      // The crash lands at a random moment of the clients' work: the moment is the fault injected.
      await new Promise((r) => setTimeout(r, randomInt(300, 1200)));
      server.proc.kill('SIGKILL');
      stop = true;
      await Promise.all(clients);
      await server.stop();
      server = null;
    }
    server = await spawnServer({ dataDir });
    await verify(server);
    console.log(
      `kill -9 rounds: ${ROUNDS}; acknowledged: ${totals.creates} creates, ${totals.edits} edits, ${totals.deletes} deletes, ` +
        `${totals.burnsRead} one-time reads, ${totals.reads} reads; ${totals.inFlight} requests cut short by a kill; ${totals.checked} paste checks after restarts`,
    );
    assert.ok(totals.creates > ROUNDS * 10, 'the rounds did work');
  } finally {
    await server?.stop();
    await cleanup(dataDir);
  }

  /** One client's random work until the server dies under it. */
  async function client(s: ProcessServer, c: number, stopped: () => boolean): Promise<void> {
    const mine = owned[c] as Map<string, Possible>;
    for (let n = 0; !stopped(); n++) {
      const live = [...mine].filter(([, p]) => p.size === 1 && !p.has(null));
      const pick = live.length === 0 ? undefined : live[randomInt(live.length)];
      const roll = randomInt(100);
      try {
        if (roll < 35 || pick === undefined) {
          const content = text(c, n);
          const burn = roll % 7 === 0;
          const r = await req(s, 'POST', '/api/v1/paste_create.php', {
            token,
            body: { content, burn_after_read: burn ? 1 : 0 },
          });
          assert.equal(r.status, 200, r.text);
          const hash = String(r.json['hash']);
          totals.creates++;
          if (burn) unread.add(hash);
          else mine.set(hash, new Set([content]));
        } else if (roll < 55) {
          const [hash, was] = pick;
          const content = text(c, n);
          // In flight until acknowledged: either text may be on disk after a kill.
          mine.set(hash, new Set([...was, content]));
          const r = await req(s, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content } });
          assert.equal(r.status, 200, r.text);
          mine.set(hash, new Set([content]));
          totals.edits++;
        } else if (roll < 65) {
          const [hash, was] = pick;
          mine.set(hash, new Set([...was, null]));
          const r = await req(s, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
          assert.equal(r.status, 200, r.text);
          mine.set(hash, new Set([null]));
          totals.deletes++;
        } else if (roll < 80 && unread.size > 0) {
          // Two readers race for a one-time paste: at most one may get it.
          const hash = [...unread][randomInt(unread.size)] as string;
          const got = await Promise.all(
            [0, 1].map(() => req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token }).catch(() => null)),
          );
          const winners = got.filter((r) => r?.status === 200).length;
          assert.ok(winners <= 1, `one-time paste ${hash} was given to ${winners} readers`);
          if (winners === 1) {
            assert.ok(!givenOut.has(hash), `one-time paste ${hash} was given out again after a restart`);
            givenOut.add(hash);
            unread.delete(hash);
            totals.burnsRead++;
          }
        } else {
          const [hash, was] = pick;
          const r = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
          assert.equal(r.status, 200);
          assert.ok(was.has(r.text), `read of ${hash} gave text it never had`);
          totals.reads++;
        }
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        // The connection died with the server: this request was never acknowledged.
        totals.inFlight++;
        return;
      }
    }
  }

  /** After a restart: every paste is in a state its acknowledged history allows, and now certain. */
  async function verify(s: ProcessServer): Promise<void> {
    for (const mine of owned) {
      for (const [hash, possible] of mine) {
        const r = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
        const now = r.status === 404 ? null : r.status === 200 ? r.text : undefined;
        assert.ok(
          now !== undefined && possible.has(now),
          `paste ${hash}: ${r.status} ${r.text.slice(0, 60)} is not among its ${possible.size} possible states`,
        );
        mine.set(hash, new Set([now]));
        totals.checked++;
      }
    }
    for (const hash of givenOut) {
      const r = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
      assert.equal(r.status, 410, `one-time paste ${hash} was read, yet answers ${r.status}`);
    }
    // On the data folder: no file is torn, and no temp file is left behind (a database's rows
    // are written in transactions, and it has no scratch folder).
    if (BACKEND === 'postgres') return;
    for (const shard of await readdir(join(dataDir, 'pastes'))) {
      for (const f of await readdir(join(dataDir, 'pastes', shard)))
        parseFile(await readFile(join(dataDir, 'pastes', shard, f), 'utf8'));
    }
    // Temp files are named after the writing process: the new server may be writing one now, but
    // none may be left from a process before it.
    const left = (await readdir(join(dataDir, 'tmp'))).filter((f) => !f.startsWith(`${s.proc.pid}-`));
    assert.deepEqual(left, [], 'the scratch folder is emptied at start');
  }
});
