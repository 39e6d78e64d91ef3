import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from '../helpers/server.ts';
import { registerAll, WebClient } from '../helpers/web-client.ts';

/**
 * U+0000 (`%00` in a query or a form, `\u0000` in JSON) is text PostgreSQL refuses: wherever a
 * visitor's text reaches a query it must be answered as on the data folder, never with a 500.
 */
const Z = '%00';
const N = '\u0000';

let s: AppServer;
let admin: WebClient;
let token: string;
let hash: string;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1', ANONYMOUS_PASTES: '1' } });
  [admin] = await registerAll(s, 'root');
  token = await makeToken(s.dataDir, { user: 'root', scopes: 'read,write' });
  const r = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x', password: 'pw' } });
  assert.equal(r.status, 200, r.text);
  hash = r.json['hash'] as string;
});

describe('a NUL in what a visitor sends', () => {
  test('/admin/logs?endpoint=%00 is a plain empty result, as any endpoint no line has', async () => {
    const r = await admin.get(`/admin/logs?endpoint=${Z}`);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /No log entries match/);
    const both = await admin.get(`/admin/logs?endpoint=${Z}&status=2&user=root`);
    assert.equal(both.status, 200, both.text);
    assert.match(both.text, /No log entries match/);
  });

  test('a shown-once page named by a key with a NUL says it was shown, as for any unknown key', async () => {
    const keys = await admin.get(`/api_keys.php?created=${Z}`);
    assert.equal(keys.status, 200, keys.text);
    assert.match(keys.text, /shown once and is not kept/);
    const users = await admin.get(`/admin/users?added=a${Z}b`);
    assert.equal(users.status, 200, users.text);
    assert.match(users.text, /shown once and is not kept/);
  });

  test('no page, form or API field answers 5xx for it', async () => {
    const pages = [
      `/?from=${Z}`,
      `/?page=${Z}`,
      `/my?q=${Z}`,
      `/my?q=a${Z}b&language=${Z}&privacy=${Z}&page=${Z}`,
      `/api_keys.php?revoke=${Z}`,
      `/admin/users?user=${Z}&done=${Z}`,
      `/admin/tokens?q=${Z}&saved=${Z}&revoke=${Z}&page=${Z}`,
      `/admin/logs?token=${Z}&user=${Z}&from=${Z}&to=${Z}&status=${Z}`,
      `/admin/logs?cursor=${Z}`,
      `/admin/audit?page=${Z}`,
      `/login?next=${Z}`,
      `/p/${Z}`,
      `/p/${hash}?download=${Z}&view=${Z}`,
      `/p/${hash}/history?from=${Z}&to=${Z}&page=${Z}`,
      `/p/${hash}/raw?password=${Z}`,
      `/s/${Z}`,
      `/p/${hash}/delete/${Z}`,
      `/${Z}`,
    ];
    for (const path of pages) {
      const r = await admin.get(path);
      assert.ok(r.status < 500, `GET ${path}: ${r.status}`);
    }
    const forms: [string, Record<string, string>][] = [
      ['/', { content: `a${N}b`, title: `t${N}`, language: `x${N}`, password: `p${N}`, privacy: N, expiry: N }],
      ['/', { content: `a${N}b`, language: `js${N}` }],
      ['/api_keys.php', { action: 'create', label: `l${N}`, scope_read: '1' }],
      ['/api_keys.php', { action: 'revoke', id: N }],
      ['/admin/tokens', { id: N, rate: N }],
      ['/admin/users', { action: 'add', name: `n${N}` }],
      ['/admin/users', { action: 'disable', name: N }],
      [`/p/${hash}/edit`, { content: `c${N}`, title: N, language: N, password: N }],
      ['/account', { current: N, password: N, confirm: N }],
    ];
    for (const [path, fields] of forms) {
      await admin.get(path);
      const r = await admin.post(path, fields);
      assert.ok(r.status < 500, `POST ${path} ${JSON.stringify(fields)}: ${r.status}`);
    }
    for (const path of [`/p/${hash}`, `/p/${hash}/raw`]) {
      await admin.get(`/p/${hash}`);
      const r = await admin.post(path, { password: `p${N}` });
      assert.ok(r.status < 500, `POST ${path}: ${r.status}`);
    }
    const visitor = new WebClient(s);
    for (const [path, fields] of [
      ['/login', { name: N, password: N }],
      ['/register', { name: `a${N}`, password: 'password123', confirm: 'password123' }],
      ['/', { content: `a${N}` }],
    ] as const) {
      await visitor.get(path);
      const r = await visitor.post(path, fields);
      assert.ok(r.status < 500, `visitor POST ${path}: ${r.status}`);
    }
    const calls: [string, string, Record<string, unknown>?][] = [
      ['GET', `/api/v1/paste.php?hash=${Z}`],
      ['GET', `/api/v1/paste.php?hash=${hash}&password=${Z}`],
      ['GET', `/api/v1/raw.php?hash=${hash}&password=${Z}`],
      ['POST', '/api/v1/paste_create.php', { content: `a${N}`, title: `t${N}`, language: `x${N}`, password: N }],
      ['POST', `/api/v1/paste_create.php?title=${Z}`, { content: 'x', language: `c${N}` }],
      ['POST', '/api/v1/paste_edit.php', { hash, content: `a${N}`, title: N, language: N, password: N }],
      ['POST', '/api/v1/paste_delete.php', { hash: N }],
      ['GET', `/documents/${Z}`],
      ['GET', `/raw/${Z}`],
      ['GET', `/documents/${hash}?password=${Z}`],
    ];
    for (const [method, path, body] of calls) {
      for (const as of [{ token }, {}]) {
        const r = await req(s, method, path, { ...as, ...(body === undefined ? {} : { body }) });
        assert.ok(r.status < 500, `${method} ${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
      }
      const r = await req(
        s,
        method,
        `${path}${path.includes('?') ? '&' : '?'}token=${Z}`,
        body === undefined ? {} : { body },
      );
      assert.ok(r.status < 500, `${method} ${path} with token=%00: ${r.status} ${r.text}`);
    }
    const haste = await req(s, 'POST', '/documents', { body: `a${N}`, headers: { 'content-type': 'text/plain' } });
    assert.ok(haste.status < 500, `POST /documents: ${haste.status}`);
    assert.doesNotMatch(s.output(), /invalid byte sequence|unsupported Unicode escape/);
  });
});
