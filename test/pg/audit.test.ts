import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import type { Actor } from '../../src/log/audit.ts';
import { PgAudit } from '../../src/pg/audit.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

let db: Database;
before(async () => {
  db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
});
after(() => db.close());

const cliActor: Actor = { via: 'cli', user_id: null, name: 'ops', ip: null };
const webActor: Actor = { via: 'web', user_id: 1, name: 'root', ip: '10.0.0.5' };

test('entries read back newest first, paged, shaped as the file log returns them', async () => {
  let now = Date.parse('2026-03-01T23:59:59Z');
  const log = new PgAudit(db.sql, () => now);
  assert.deepEqual(await log.read(0, 5), { entries: [], more: false });
  for (let i = 0; i < 3; i++)
    await log.record(cliActor, { action: 'user.add', target: `user:u${i}`, before: null, after: { i } });
  now = Date.parse('2026-03-02T00:00:01.250Z');
  // Recorded without waiting: they still go in order.
  await Promise.all(
    [3, 4].map((i) =>
      log.record(webActor, {
        action: 'user.add',
        target: `user:u${i}`,
        before: { z: 1, a: [2, '\u0000'] },
        after: null,
      }),
    ),
  );
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
  assert.deepEqual(rest.entries[2], {
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
  const web = first.entries[0];
  assert.deepEqual(web, {
    time: '2026-03-02T00:00:01.250Z',
    via: 'web',
    user_id: 1,
    user: 'root',
    ip: '10.0.0.5',
    action: 'user.add',
    target: 'user:u4',
    before: { z: 1, a: [2, '\u0000'] },
    after: null,
  });
  assert.deepEqual(Object.keys(web?.before as object), ['z', 'a'], 'keys in the order written');
  assert.deepEqual((await log.read(5, 0)).more, false);
  assert.deepEqual((await log.read(0, 0)).more, true);
});

test('a value JSON leaves out reads back without its key, as the file line has none', async () => {
  const log = new PgAudit(db.sql, () => Date.parse('2026-04-01T00:00:00Z'));
  await log.record(cliActor, { action: 'backup', target: 'backup-1.tar', before: undefined, after: 'done' });
  const [entry] = (await log.read(0, 1)).entries;
  assert.equal(entry?.target, 'backup-1.tar');
  assert.equal('before' in (entry ?? {}), false);
  assert.equal(entry?.after, 'done');
});

test('an entry that cannot be written is reported, not thrown: the action it records is already done', async () => {
  const warnings: string[] = [];
  const log = new PgAudit(db.sql, Date.now, (m) => warnings.push(m));
  await db.sql`alter table audit_log rename to audit_log_away`;
  try {
    await log.record(cliActor, { action: 'user.disable', target: 'user:gus', before: null, after: null });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^audit log: user\.disable user:gus was done but could not be recorded: /);
  } finally {
    await db.sql`alter table audit_log_away rename to audit_log`;
  }
  // Later entries are still written.
  await log.record(cliActor, { action: 'user.enable', target: 'user:gus', before: null, after: null });
  assert.equal(warnings.length, 1);
  assert.equal((await log.read(0, 1)).entries[0]?.action, 'user.enable');
});
