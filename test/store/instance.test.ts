import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { claimFile, claimFolder, FolderInUse, folderHolder } from '../../src/store/instance.ts';
import { tempDataDir } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

/** A claim by `pid` on this host, last refreshed `agoMs` ago. */
async function claimBy(dir: string, pid: number, agoMs: number): Promise<void> {
  await writeFile(claimFile(dir), `${pid} ${hostname()}\n`);
  const t = new Date(Date.now() - agoMs);
  await utimes(claimFile(dir), t, t);
}

/** The state letter of a process in /proc (Linux). */
const stateOf = async (pid: number): Promise<string> => {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[0] ?? '';
};

/** A process left a zombie: its parent (a shell that exec'd sleep) never reaps it. */
async function zombie(): Promise<{ pid: number; done: () => void }> {
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once('data', (d: Buffer) => resolve(Number(String(d)))),
  );
  await until(async () => (await stateOf(pid)) === 'Z', { what: 'the child to be a zombie' });
  return { pid, done: () => void parent.kill('SIGKILL') };
}

describe('the claim on a data folder (server.pid)', () => {
  test('a zombie server holds nothing: its claim is taken over', { skip: process.platform !== 'linux' }, async () => {
    const dir = await tempDataDir();
    const z = await zombie();
    try {
      await claimBy(dir, z.pid, 0);
      assert.equal(await folderHolder(dir), null);
      const claim = await claimFolder(dir);
      assert.equal(await readFile(claimFile(dir), 'utf8'), `${process.pid} ${hostname()}\n`);
      await claim.release();
    } finally {
      z.done();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a live server on this host keeps its claim however long since it was refreshed', async () => {
    const dir = await tempDataDir();
    try {
      // pid 1 is alive and began (at boot) before a claim refreshed 40 s ago, past the 30 s of another host's.
      await claimBy(dir, 1, 40_000);
      assert.deepEqual(await folderHolder(dir), { pid: 1, host: hostname(), what: 'server' });
      await assert.rejects(claimFolder(dir), FolderInUse);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an old claim whose pid now names a process started after it is stale', {
    skip: process.platform !== 'linux',
  }, async () => {
    const dir = await tempDataDir();
    const later = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await claimBy(dir, later.pid ?? 0, 10 * 60_000);
      assert.equal(await folderHolder(dir), null);
    } finally {
      later.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('refresh touches the claim, writes it again when it has gone, and says when another holds it', async () => {
    const dir = await tempDataDir();
    try {
      const claim = await claimFolder(dir);
      const old = new Date(Date.now() - 60_000);
      await utimes(claimFile(dir), old, old);
      assert.equal(claim.refresh(), 'kept');
      assert.ok(Date.now() - (await stat(claimFile(dir))).mtimeMs < 5_000);
      await unlink(claimFile(dir));
      assert.equal(claim.refresh(), 'rewritten');
      assert.equal(await readFile(claimFile(dir), 'utf8'), `${process.pid} ${hostname()}\n`);
      await writeFile(claimFile(dir), `1 ${hostname()}\n`);
      assert.equal(claim.refresh(), 'taken');
      await claim.release();
      assert.equal(await readFile(claimFile(dir), 'utf8'), `1 ${hostname()}\n`, "another's claim is left alone");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
