import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppServer, req } from '../helpers/server.ts';
import { register, WebClient } from '../helpers/web-client.ts';
import { seenByAll, startInstances } from '../helpers/instances.ts';

test('the admin pages of every instance show the API log and the audit entries of all of them', async (t) => {
  const set = await startInstances(t, 3, { env: { OPEN_REGISTRATION: '1' } });
  const first = new WebClient(set.at(0));
  await register(first, 'root');
  // One admin session, a client per instance.
  const admins = set.all.map((s) => {
    const c = new WebClient(s);
    for (const [k, v] of first.cookies) c.cookies.set(k, v);
    return c;
  });
  const admin = (s: AppServer): WebClient => admins[set.all.indexOf(s)] as WebClient;
  // Each instance logs an API request and audits a user it adds.
  for (const [i, s] of set.all.entries()) {
    assert.equal((await req(s, 'GET', `/api/v1/from-instance-${i}`)).status, 404);
    await admin(s).get('/admin/users');
    assert.equal((await admin(s).post('/admin/users', { action: 'add', name: `made-on-${i}` })).status, 303);
  }
  const shows = (text: string, what: (i: number) => string): boolean => set.all.every((_, i) => text.includes(what(i)));
  // The API log is written in batches every second: every instance's lines are listed within two.
  await seenByAll(
    set.all,
    null,
    async (s) => shows((await admin(s).get('/admin/logs')).text, (i) => `/api/v1/from-instance-${i}`),
    'every API request',
    2_000,
  );
  for (const s of set.all) {
    const audit = await admin(s).get('/admin/audit');
    assert.equal(audit.status, 200, `port ${s.port}`);
    assert.ok(
      shows(audit.text, (i) => `made-on-${i}`),
      `port ${s.port}: ${audit.text}`,
    );
  }
});
