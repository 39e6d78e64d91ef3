import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseFile } from '../../src/store/paste-record.ts';
import { CLAIM_GRACE_MS } from '../../src/paste/files.ts';
import { BACKEND } from '../helpers/backend.ts';
import { sendFiles, sha256 } from '../helpers/multipart.ts';
import { namedFileBytes, storedFileBytes } from '../helpers/stored.ts';
import { until } from '../helpers/until.ts';
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

/**
 * `rounds` times: a server started on `dataDir` and checked by `verify`, CLIENTS clients at
 * `work` on it, and a SIGKILL at a random moment up to `maxMs` in (the moment is the fault
 * injected). Answers the server started and checked after the last round.
 */
async function killRounds(
  dataDir: string,
  rounds: number,
  maxMs: number,
  work: (s: ProcessServer, client: number, stopped: () => boolean) => Promise<void>,
  verify: (s: ProcessServer) => Promise<void>,
): Promise<ProcessServer> {
  for (let round = 0; round <= rounds; round++) {
    const server = await spawnServer({ dataDir });
    try {
      await verify(server);
    } catch (err) {
      await server.stop();
      throw err;
    }
    if (round === rounds) return server;
    let stop = false;
    const clients = Array.from({ length: CLIENTS }, (_, c) => work(server, c, () => stop));
    await new Promise((r) => setTimeout(r, randomInt(300, maxMs)));
    server.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);
    await server.stop();
  }
  throw new Error('unreachable');
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
    server = await killRounds(dataDir, ROUNDS, 1200, client, verify);
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

/** What a paste with files may be now: each file list it may have (name -> SHA-256), null for "deleted". */
type FileStates = Map<string, Map<string, string> | null>;

const listKey = (files: Map<string, string> | null): string =>
  files === null
    ? 'deleted'
    : [...files]
        .sort()
        .map(([n, s]) => `${n}=${s}`)
        .join(',');

const FILE_ROUNDS = Math.max(2, Math.floor(ROUNDS / 2));

test(`kill -9 during uploads, ${FILE_ROUNDS} rounds: every acknowledged file reads back byte for byte, and no bytes are left that no paste names after the sweep`, {
  timeout: 15 * 60_000,
}, async () => {
  const dataDir = await tempDataDir();
  const token = await makeToken(dataDir);
  /** Each client's pastes, with every state they may be in (only that client changes them). */
  const owned: Map<string, FileStates>[] = Array.from({ length: CLIENTS }, () => new Map());
  /** The bytes of every file sent, by SHA-256; a few are sent again, to be stored once. */
  const bytesOf = new Map<string, Buffer>();
  const pool = Array.from({ length: 4 }, () => randomBytes(randomInt(1, 40_000)));
  const totals = { creates: 0, edits: 0, deletes: 0, inFlight: 0, files: 0 };
  /** Each client's next request number, kept across rounds: a file name made in one round is never made again. */
  const serial: number[] = Array.from({ length: CLIENTS }, () => 0);
  let server: ProcessServer | null = null;
  const randomFile = (): Buffer =>
    randomInt(4) === 0 ? (pool[randomInt(pool.length)] as Buffer) : randomBytes(randomInt(1, 300_000));

  try {
    server = await killRounds(dataDir, FILE_ROUNDS, 1500, uploader, verify);
    // The sweep runs with the upkeep every few seconds and leaves a claim alone for CLAIM_GRACE_MS:
    // bytes whose paste never got written (a kill between the two) go once that grace is over.
    await until(
      async () => {
        const named = new Set(await namedFileBytes(dataDir));
        return (await storedFileBytes(dataDir)).every((s) => named.has(s));
      },
      { what: 'the sweep to remove every byte no paste names', timeoutMs: CLAIM_GRACE_MS + 60_000, everyMs: 500 },
    );
    const named = await namedFileBytes(dataDir);
    assert.deepEqual(await storedFileBytes(dataDir), named, 'every named file has its bytes, and nothing else is kept');
    console.log(
      `kill -9 upload rounds: ${FILE_ROUNDS}; acknowledged: ${totals.creates} creates (${totals.files} files), ${totals.edits} edits, ${totals.deletes} deletes; ${totals.inFlight} requests cut short by a kill; ${named.length} distinct files stored at the end`,
    );
    assert.ok(totals.creates > FILE_ROUNDS, 'the rounds did work');
  } finally {
    await server?.stop();
    await cleanup(dataDir);
  }

  /** One client's uploads, edits and deletes until the server dies under it. */
  async function uploader(s: ProcessServer, c: number, stopped: () => boolean): Promise<void> {
    const mine = owned[c] as Map<string, FileStates>;
    while (!stopped()) {
      const n = serial[c] ?? 0;
      serial[c] = n + 1;
      const live = [...mine].filter(([, st]) => st.size === 1 && !st.has('deleted'));
      const pick = live.length === 0 ? undefined : live[randomInt(live.length)];
      const roll = randomInt(100);
      try {
        if (roll < 60 || pick === undefined) {
          const files = Array.from({ length: randomInt(1, 4) }, (_, i) => ({
            name: `c${c}-${n}-${i}.bin`,
            bytes: randomFile(),
          }));
          for (const f of files) bytesOf.set(sha256(f.bytes), f.bytes);
          const r = await sendFiles(s, token, { content: randomInt(2) === 0 ? '' : `paste ${c}/${n}` }, files);
          assert.equal(r.status, 200, r.text);
          const list = new Map(files.map((f) => [f.name, sha256(f.bytes)]));
          mine.set(String(r.json['hash']), new Map([[listKey(list), list]]));
          totals.creates++;
          totals.files += files.length;
        } else if (roll < 85) {
          const [hash, st] = pick;
          const was = [...st.values()][0] as Map<string, string>;
          const add = { name: `c${c}-${n}-e.bin`, bytes: randomFile() };
          bytesOf.set(sha256(add.bytes), add.bytes);
          const gone = [...was.keys()][randomInt(was.size)] as string;
          const next = new Map(was);
          next.delete(gone);
          next.set(add.name, sha256(add.bytes));
          // In flight until acknowledged: either list may be stored after a kill.
          st.set(listKey(next), next);
          const r = await sendFiles(
            s,
            token,
            { hash, content: 'edited', remove_file: gone },
            [add],
            '/api/v1/paste_edit.php',
          );
          assert.equal(r.status, 200, r.text);
          mine.set(hash, new Map([[listKey(next), next]]));
          totals.edits++;
        } else {
          const [hash, st] = pick;
          st.set('deleted', null);
          const r = await req(s, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
          assert.equal(r.status, 200, r.text);
          mine.set(hash, new Map([['deleted', null]]));
          totals.deletes++;
        }
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        totals.inFlight++;
        return;
      }
    }
  }

  /** After a restart: each paste holds one of the file lists it may, and each of its files reads back by SHA-256. */
  async function verify(s: ProcessServer): Promise<void> {
    for (const mine of owned) {
      for (const [hash, st] of mine) {
        const r = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
        let now: Map<string, string> | null;
        if (r.status === 404) now = null;
        else {
          assert.equal(r.status, 200, `paste ${hash}: ${r.text.slice(0, 80)}`);
          const files = (r.json['paste'] as { files: { name: string; sha256: string }[] }).files;
          now = new Map(files.map((f) => [f.name, f.sha256]));
        }
        assert.ok(st.has(listKey(now)), `paste ${hash} holds ${listKey(now)}, none of its ${st.size} possible lists`);
        for (const [name, sha] of now ?? []) {
          const f = await req(s, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}`, { token });
          assert.equal(f.status, 200, `${hash}/${name}: ${f.text.slice(0, 80)}`);
          assert.equal(sha256(f.body), sha, `${hash}/${name} reads back byte for byte`);
          assert.ok(bytesOf.has(sha));
        }
        mine.set(hash, new Map([[listKey(now), now]]));
      }
    }
  }
});
