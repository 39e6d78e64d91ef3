import assert from 'node:assert/strict';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { AuditLog, type Actor } from '../../src/log/audit.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

const cliActor: Actor = { via: 'cli', user_id: null, name: 'ops', ip: null };

test('entries go to one file per UTC day and read back newest first, paged, skipping a torn line', async () => {
  const dir = await tempDataDir();
  try {
    let now = Date.parse('2026-03-01T23:59:59Z');
    const log = new AuditLog(join(dir, 'logs'), () => now);
    for (let i = 0; i < 3; i++)
      await log.record(cliActor, { action: 'user.add', target: `user:u${i}`, before: null, after: { i } });
    now = Date.parse('2026-03-02T00:00:01Z');
    for (let i = 3; i < 5; i++)
      await log.record(cliActor, { action: 'user.add', target: `user:u${i}`, before: null, after: { i } });
    assert.deepEqual((await readdir(join(dir, 'logs'))).sort(), ['audit-2026-03-01.jsonl', 'audit-2026-03-02.jsonl']);
    // A crash mid-append leaves at most a torn last line: it is skipped, the rest still reads.
    await appendFile(join(dir, 'logs', 'audit-2026-03-02.jsonl'), '{"time":"2026-03-02T00:00:02Z","act');
    const first = await log.read(0, 2);
    assert.deepEqual(
      first.entries.map((e) => e.target),
      ['user:u4', 'user:u3'],
    );
    assert.equal(first.more, true);
    const rest = await log.read(2, 10);
    assert.deepEqual(
      rest.entries.map((e) => e.target),
      ['user:u2', 'user:u1', 'user:u0'],
    );
    assert.equal(rest.more, false);
    const line = JSON.parse(
      (await readFile(join(dir, 'logs', 'audit-2026-03-01.jsonl'), 'utf8')).split('\n')[0] ?? '',
    ) as Record<string, unknown>;
    assert.deepEqual(line, {
      time: '2026-03-01T23:59:59.000Z',
      via: 'cli',
      user_id: null,
      user: 'ops',
      ip: null,
      action: 'user.add',
      target: 'user:u0',
      before: null,
      after: { i: 0 },
    });
    assert.deepEqual(await new AuditLog(join(dir, 'nowhere')).read(0, 5), { entries: [], more: false });
  } finally {
    await cleanup(dir);
  }
});

test('an entry that cannot be written is reported, not thrown: the action it records is already done', async () => {
  const dir = await tempDataDir();
  try {
    await writeFile(join(dir, 'logs'), 'not a folder');
    const warnings: string[] = [];
    const log = new AuditLog(join(dir, 'logs'), Date.now, (m) => warnings.push(m));
    await log.record(cliActor, { action: 'user.disable', target: 'user:gus', before: null, after: null });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^audit log: user\.disable user:gus was done but could not be recorded: /);
    // Later entries are still tried.
    await log.record(cliActor, { action: 'user.enable', target: 'user:gus', before: null, after: null });
    assert.equal(warnings.length, 2);
  } finally {
    await cleanup(dir);
  }
});
