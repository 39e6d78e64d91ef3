import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../src/cli.ts';
import { ArchiveWriter } from '../src/store/archive.ts';
import { membersOf } from './helpers/archive.ts';
import { restoreBackup } from '../src/store/restore.ts';
import { cleanup, cli, ROOT, tempDataDir } from './helpers/server.ts';

const FIXTURES = join(ROOT, 'test/fixtures/backups');
const FORMAT_2 = join(FIXTURES, 'format-2.tar.gz');
const DAY = new Date().toISOString().slice(0, 10);

async function restore(file: string, dataDir: string, opts: { force?: boolean; env?: Record<string, string> } = {}) {
  const out: string[] = [];
  await runCli(['restore', file, ...(opts.force === true ? ['--force'] : [])], {
    env: { DATA_DIR: dataDir, ...opts.env },
    stdout: (l) => out.push(l),
    readStdin: async () => '',
  });
  return out.join('\n');
}

/** Every file under `root` with its text, but the claim file. */
async function tree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true }))
    if (e.isFile() && e.name !== 'server.pid')
      out[relative(root, join(e.parentPath, e.name))] = await readFile(join(e.parentPath, e.name), 'utf8');
  return out;
}

describe('restore refuses what would not start, and keeps what it replaces', () => {
  let work: string;
  let fixture: Map<string, Buffer>;
  /** A data folder restored from the fixture: what every refused restore must leave as it is. */
  let live: string;
  let liveTree: Record<string, string>;

  /** An archive of the fixture's members with `changes` applied (null removes one). */
  async function variant(name: string, changes: Record<string, string | Buffer | null>): Promise<string> {
    const file = join(work, name);
    const w = await ArchiveWriter.create(file);
    const members = new Map(fixture);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) members.delete(k);
      else members.set(k, Buffer.from(v));
    }
    for (const [k, v] of members) await w.add(k, v, 0);
    await w.finish({ data_format: 2 });
    return file;
  }

  async function refusedIntact(file: string, message: RegExp, env: Record<string, string> = {}): Promise<void> {
    await assert.rejects(restore(file, live, { force: true, env }), message);
    assert.deepEqual(await tree(live), liveTree, 'the data folder is as it was');
    assert.ok(!(await readdir(live)).some((n) => n.startsWith('.restore')));
  }

  before(async () => {
    work = await tempDataDir();
    fixture = await membersOf(FORMAT_2);
    live = join(work, 'live');
    assert.match(await restore(FORMAT_2, live), /^restored 14 files \(5 pastes\)/);
    liveTree = await tree(live);
  });
  after(() => cleanup(work));

  test('archives written before restore streamed still restore: format 1 (as the migration kept it) and 2', async () => {
    assert.match(liveTree['accounts.json'] ?? '', /"olga"/);
    const old = join(work, 'from-format-1');
    assert.match(await restore(join(FIXTURES, 'format-1.tar.gz'), old), /^restored \d+ files \(5 pastes\)/);
    assert.equal(JSON.parse(await readFile(join(old, 'format.json'), 'utf8')).format, 1);
  });

  test('an archive whose manifest lists no files is refused, even with --force', async () => {
    const empty = join(work, 'empty.tar.gz');
    await (await ArchiveWriter.create(empty)).finish({ data_format: 2 });
    await refusedIntact(
      empty,
      /empty\.tar\.gz: it holds no accounts\.json and no format\.json \(its manifest lists 0 files\)/,
    );
    await refusedIntact(await variant('no-accounts.tar.gz', { 'accounts.json': null }), /holds no accounts\.json/);
  });

  test('an accounts.json that is not JSON, or lists no users, is refused before anything is replaced', async () => {
    await refusedIntact(
      await variant('bad-accounts.tar.gz', { 'accounts.json': '{"users": [' }),
      /bad-accounts\.tar\.gz: the restored data would not open: accounts\.json is damaged: it is not valid JSON.*; nothing was changed/,
    );
    await refusedIntact(
      await variant('no-users.tar.gz', { 'accounts.json': '{"version":1,"next_user_id":1,"users":[],"tokens":[]}' }),
      /its accounts\.json lists no users/,
    );
  });

  test('a format.json of 99, or sessions as a file, is refused before anything is replaced', async () => {
    await refusedIntact(
      await variant('format-99.tar.gz', { 'format.json': '{"format":99}' }),
      /the restored data would not open: format\.json says data format 99/,
    );
    await refusedIntact(
      await variant('sessions-file.tar.gz', { sessions: 'a file' }),
      /sessions is not part of a backup/,
    );
    await refusedIntact(
      await variant('no-format.tar.gz', { 'format.json': 'nope' }),
      /format\.json is damaged: it is not JSON/,
    );
  });

  test('a paste file larger than MAX_PASTE_BYTES allows is refused at its header', async () => {
    const big = await variant('big-paste.tar.gz', { 'pastes/ab/abcdef.json': Buffer.alloc(4 * 1024 * 1024, 0x78) });
    await refusedIntact(
      big,
      /pastes\/ab\/abcdef\.json is 4194304 bytes, more than a paste file \(MAX_PASTE_BYTES=1024\) can be \(71680 bytes\)/,
      { MAX_PASTE_BYTES: '1024' },
    );
  });

  test('a disk without room for the unpacked archive is refused, saying how much is needed', async () => {
    await assert.rejects(
      restoreBackup(FORMAT_2, live, {
        force: true,
        maxPasteBytes: 1 << 20,
        statfs: async () => ({ bavail: 2, bsize: 4096 }),
      }),
      /format-2\.tar\.gz: it unpacks to about \d+\.\d MiB and .*live has 0\.0 MiB free: make room, or restore elsewhere; nothing was changed/,
    );
    assert.deepEqual(await tree(live), liveTree);
  });

  test('--force keeps what the folder held in backups/before-restore-…/ and says where', async () => {
    const dir = join(work, 'forced');
    await restore(FORMAT_2, dir);
    await writeFile(join(dir, 'mine.txt'), 'mine');
    const out = await restore(FORMAT_2, dir, { force: true });
    const kept = /is kept in (\S+)$/m.exec(out)?.[1] ?? '';
    assert.match(kept, /\/backups\/before-restore-[\dTZ-]+$/, out);
    assert.equal(await readFile(join(kept, 'mine.txt'), 'utf8'), 'mine');
    assert.match(await readFile(join(kept, 'accounts.json'), 'utf8'), /"olga"/);
    assert.ok(!(await readdir(dir)).includes('mine.txt'));
    // A second forced restore keeps the first one's backup too.
    await restore(FORMAT_2, dir, { force: true });
    assert.equal((await readdir(join(dir, 'backups'))).length, 2);
  });

  test('a restore of an archive with logs appends the audit lines the folder had, behind a mark', async () => {
    const source = join(work, 'source');
    await restore(FORMAT_2, source);
    await cli(source, ['user', 'add', 'bob']);
    const withLogs = join(work, 'with-logs.tar.gz');
    await cli(source, ['backup', withLogs, '--with-logs']);
    const dir = join(work, 'audited');
    await restore(FORMAT_2, dir);
    await cli(dir, ['user', 'add', 'carol']);
    const own = await readFile(join(dir, 'logs', `audit-${DAY}.jsonl`), 'utf8');
    await restore(withLogs, dir, { force: true });
    const lines = (await readFile(join(dir, 'logs', `audit-${DAY}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const actions = lines.map((e) => `${String(e['action'])} ${String(e['target'])}`);
    const mark = actions.indexOf(`restore.kept_lines audit-${DAY}.jsonl`);
    assert.ok(mark > actions.indexOf('user.add user:bob'), actions.join('\n'));
    assert.ok(actions.indexOf('user.add user:bob') !== -1);
    assert.deepEqual(
      lines
        .slice(mark + 1, -1)
        .map((l) => `${JSON.stringify(l)}\n`)
        .join(''),
      own,
      'every line the folder had, in order, after the mark',
    );
    assert.equal(actions.at(-1), `restore ${withLogs}`);
  });
});

describe('backup into DATA_DIR', () => {
  test('is refused but for DATA_DIR/backups/, which no backup reads', async () => {
    const dir = await tempDataDir();
    try {
      await restore(FORMAT_2, dir);
      await assert.rejects(cli(dir, ['backup', join(dir, 'state', 'b.tar.gz')]), /b\.tar\.gz is inside DATA_DIR/);
      await assert.rejects(cli(dir, ['backup', join(dir, 'accounts.json')]), /is inside DATA_DIR/);
      assert.ok(!(await readdir(join(dir, 'state'))).some((n) => n.startsWith('b.tar.gz')));
      assert.match(await readFile(join(dir, 'accounts.json'), 'utf8'), /"olga"/);
      await mkdir(join(dir, 'backups'), { recursive: true });
      await cli(dir, ['backup', join(dir, 'backups', 'one.tar.gz'), '--with-logs']);
      await cli(dir, ['backup', join(dir, 'backups', 'two.tar.gz'), '--with-logs']);
      const names = [...(await membersOf(join(dir, 'backups', 'two.tar.gz'))).keys()];
      assert.ok(!names.some((n) => n.includes('tar.gz')), names.join(','));
    } finally {
      await cleanup(dir);
    }
  });

  test('--with-logs streams each log from its file, cut after its last whole line', async () => {
    const dir = await tempDataDir();
    try {
      await restore(FORMAT_2, dir);
      const whole = `${'{"endpoint":"/api/v1/paste.php"}\n'.repeat(100_000)}`;
      await writeFile(join(dir, 'logs', 'api-2026-01-01.jsonl'), `${whole}{"torn":`);
      await mkdir(join(dir, 'backups'));
      await cli(dir, ['backup', join(dir, 'backups', 'logs.tar.gz'), '--with-logs']);
      const got = (await membersOf(join(dir, 'backups', 'logs.tar.gz'))).get('logs/api-2026-01-01.jsonl');
      assert.equal(got?.length, Buffer.byteLength(whole));
      assert.ok(got?.equals(Buffer.from(whole)));
    } finally {
      await cleanup(dir);
    }
  });
});
