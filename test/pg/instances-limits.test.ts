import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppServer, req } from '../helpers/server.ts';
import { startInstances } from '../helpers/instances.ts';
import { WebClient } from '../helpers/web-client.ts';

// One limit is one limit (README, Running several instances): every bucket is shared by the
// instances on one database, so three of them let through what one would, not three times it.

const count = (statuses: number[], status: number): number => statuses.filter((s) => s === status).length;

test('a token of 30 a minute gets exactly 30 requests through three instances, the rest 429 with the same headers', async (t) => {
  const set = await startInstances(t);
  const token = await set.token({ user: 'alice', scopes: 'read', rate: 30 });
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => req(set.at(i), 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(count(statuses, 404), 30, statuses.join(' '));
  assert.equal(count(statuses, 429), 30, statuses.join(' '));
  const refused = answers.find((a) => a.status === 429);
  assert.equal(refused?.headers['x-ratelimit-limit'], '30');
  assert.equal(refused?.headers['x-ratelimit-remaining'], '0');
  assert.equal(refused?.headers['retry-after'], '2');
  assert.equal(refused?.json['limit_per_minute'], 30);
  const remaining = answers.filter((a) => a.status === 404).map((a) => Number(a.headers['x-ratelimit-remaining']));
  assert.deepEqual(
    remaining.sort((x, y) => x - y),
    Array.from({ length: 30 }, (_, i) => i),
    'each allowed request saw its own place in the one bucket',
  );
});

test('the failed-authentication budget per client IP is one budget across instances', async (t) => {
  const set = await startInstances(t, 3, { env: { AUTH_FAIL_LIMIT_PER_MINUTE: '12' } });
  const answers = await Promise.all(
    Array.from({ length: 36 }, (_, i) =>
      req(set.at(i), 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: `pst_AAAAAAAA_${'x'.repeat(31)}${i % 10}` }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(count(statuses, 401), 12, statuses.join(' '));
  assert.equal(count(statuses, 429), 24, statuses.join(' '));
});

test('the paste-password budget per client and paste is one budget across instances', async (t) => {
  const set = await startInstances(t);
  const owner = await set.token({ user: 'alice' });
  const reader = await set.token({ user: 'bob', scopes: 'read' });
  const made = await req(set.at(0), 'POST', '/api/v1/paste_create.php', {
    token: owner,
    body: { content: 'guarded', password: 'right' },
  });
  const hash = made.json['hash'] as string;
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      req(set.at(i), 'GET', `/api/v1/paste.php?hash=${hash}`, {
        token: reader,
        headers: { 'x-paste-password': 'wrong' },
      }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(count(statuses, 403), 10, statuses.join(' '));
  assert.equal(count(statuses, 429), 20, statuses.join(' '));
});

test('the login budgets (per client, and per client and account) are one budget each across instances', async (t) => {
  const set = await startInstances(t, 3, { env: { AUTH_FAIL_LIMIT_PER_MINUTE: '15' } });
  await set.cli(['user', 'add', 'alice', '--password-stdin'], 'password123');
  const attempt = async (s: AppServer, name: string): Promise<number> => {
    const c = new WebClient(s);
    await c.get('/login');
    return (await c.post('/login', { name, password: 'wrong one', next: '/' })).status;
  };
  // Per client and account: 10 a minute, whichever instance is asked.
  const one = await Promise.all(Array.from({ length: 24 }, (_, i) => attempt(set.at(i), 'alice')));
  assert.equal(count(one, 401), 10, one.join(' '));
  assert.equal(count(one, 429), 14, one.join(' '));
  // Per client: 15 in all, so 5 more on other names before every name is refused.
  const many = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(set.at(i), `nobody${i}`)));
  assert.equal(count(many, 401), 5, many.join(' '));
  assert.equal(count(many, 429), 7, many.join(' '));
});
