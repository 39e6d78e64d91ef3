import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SHORT_LINK_MISSES_PER_MINUTE } from '../../src/paste/service.ts';
import { req, startServer, type AppServer } from '../helpers/server.ts';
import { apiLogLines } from '../helpers/stored.ts';
import { until } from '../helpers/until.ts';
import { WebClient } from '../helpers/web-client.ts';

const HOME = '2001:db8:a:1';
const NEIGHBOUR = '2001:db8:a:2';
/** A fresh address in a /64 for each call, as a client rotating through its own network would. */
const rotating = (net: string): (() => string) => {
  let n = 0;
  return () => `${net}:${(++n).toString(16)}:0:0:${((n * 7919) & 0xffff).toString(16)}`;
};
const badToken = (ip: string) => ({ token: 'pst_AAAAAAAA_not-a-token', headers: { 'x-forwarded-for': ip } });
const hashQuery = '/api/v1/paste.php?hash=AAAAAAAAAA';

async function apiLogIps(server: AppServer, n: number): Promise<string[]> {
  // The log is written in the background at least once a second: wait for the lines.
  let ips: string[] = [];
  await until(async () => (ips = (await apiLogLines(server.dataDir)).map((l) => String(l['ip']))).length >= n, {
    what: `${n} lines in the API log`,
  });
  return ips;
}

describe('per-IP budgets and IPv6 clients', () => {
  test('addresses in one /64 share the failed-authentication budget; another /64 has its own; the log keeps each full address', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '5' } });
    const next = rotating(HOME);
    const sent: string[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const ip = next();
      sent.push(ip);
      statuses.push((await req(server, 'GET', hashQuery, badToken(ip))).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
    assert.equal((await req(server, 'GET', hashQuery, badToken(`${NEIGHBOUR}::1`))).status, 401);
    // IPv4 clients are still each their own.
    assert.equal((await req(server, 'GET', hashQuery, badToken('192.0.2.1'))).status, 401);
    const ips = await apiLogIps(server, 9);
    assert.deepEqual(ips.slice(0, 7), sent);
  });

  test('addresses in one /64 share the short-link budget; another /64 has its own', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1' } });
    const next = rotating(HOME);
    const miss = (i: number, ip: string) =>
      new WebClient(server).get(`/s/Zz${String(i).padStart(4, '0')}`, { 'x-forwarded-for': ip });
    for (let i = 0; i < SHORT_LINK_MISSES_PER_MINUTE; i++)
      assert.equal((await miss(i, next())).status, 404, `miss ${i}`);
    assert.equal((await miss(0, next())).status, 429);
    assert.equal((await miss(0, `${NEIGHBOUR}::5`)).status, 404);
  });

  test('IPV6_PREFIX_LENGTH sets the network a budget covers', async () => {
    const server = await startServer({
      env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '2', IPV6_PREFIX_LENGTH: '48' },
    });
    // 2001:db8:a:1::/64 and 2001:db8:a:2::/64 are one /48.
    assert.equal((await req(server, 'GET', hashQuery, badToken(`${HOME}::1`))).status, 401);
    assert.equal((await req(server, 'GET', hashQuery, badToken(`${NEIGHBOUR}::1`))).status, 401);
    assert.equal((await req(server, 'GET', hashQuery, badToken(`${NEIGHBOUR}::2`))).status, 429);
    assert.equal((await req(server, 'GET', hashQuery, badToken('2001:db8:b::1'))).status, 401);
  });

  test('a forwarded address with a port, or brackets and a port, is the address: twelve spellings share one budget', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '5' } });
    const spellings = Array.from({ length: 12 }, (_, i) => `192.0.2.7:${1000 + i}`);
    const statuses: number[] = [];
    for (const ip of spellings) statuses.push((await req(server, 'GET', hashQuery, badToken(ip))).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    const v6 = ['[2001:db8:c::1]:443', '[2001:db8:c::1]:444', '2001:db8:c::1', '[2001:db8:c::1]', '[2001:db8:c::1]:1'];
    const v6Statuses: number[] = [];
    for (const ip of v6) v6Statuses.push((await req(server, 'GET', hashQuery, badToken(ip))).status);
    assert.deepEqual(v6Statuses, [401, 401, 401, 401, 401]);
    assert.equal((await req(server, 'GET', hashQuery, badToken('[2001:db8:c::1]:445'))).status, 429);
    const ips = await apiLogIps(server, 18);
    assert.deepEqual(new Set(ips.slice(0, 12)), new Set(['192.0.2.7']));
    assert.deepEqual(new Set(ips.slice(12)), new Set(['2001:db8:c::1']));
  });

  test('a forwarded hop that is no address counts as the proxy’s own address', async () => {
    const server = await startServer({ env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '2' } });
    const statuses: number[] = [];
    for (const hop of ['unknown', 'evil.example', '192.0.2.7:x'])
      statuses.push((await req(server, 'GET', hashQuery, badToken(hop))).status);
    assert.deepEqual(statuses, [401, 401, 429]);
    assert.deepEqual(new Set(await apiLogIps(server, 3)), new Set(['127.0.0.1']));
  });
});
