import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.ts';
import { parseCidrList } from '../../src/config/auth-proxy.ts';
import { TrustedPeers } from '../../src/http/trusted-peers.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

test('TrustedPeers matches IPv4 and IPv6 networks, IPv4-mapped peers as IPv4, and nothing else', () => {
  const { cidrs, problems } = parseCidrList('10.0.0.0/8, 192.0.2.7 fd00:1::/32,::1');
  assert.deepEqual(problems, []);
  const peers = new TrustedPeers(cidrs);
  const cases: [string | undefined, boolean][] = [
    ['10.1.2.3', true],
    ['::ffff:10.9.9.9', true],
    ['192.0.2.7', true],
    ['192.0.2.8', false],
    ['11.0.0.1', false],
    ['fd00:1:ffff::5', true],
    ['fd00:2::5', false],
    ['::1', true],
    ['::2', false],
    ['fe80::1%eth0', false],
    ['', false],
    [undefined, false],
    ['not an address', false],
  ];
  for (const [peer, trusted] of cases) assert.equal(peers.has(peer), trusted, String(peer));
});

test('parseCidrList refuses what is not a network, and a network of everyone', () => {
  for (const bad of ['10.0.0.0/33', '::/0', '0.0.0.0/0', 'proxy.local', '10.0.0.0/8/1', '10.0.0.0/x', 'fd00::/129'])
    assert.equal(parseCidrList(bad).problems.length, 1, bad);
});

test('AUTH_PROXY_* is off by default, and read whole when AUTH_PROXY_HEADER is set', () => {
  assert.equal(parseConfig({}).authProxy, null);
  const c = parseConfig({
    AUTH_PROXY_HEADER: 'Remote-User',
    AUTH_PROXY_TRUSTED: '127.0.0.1/32,::1/128',
    AUTH_PROXY_CREATE: '1',
    AUTH_PROXY_ADMIN_GROUP: 'admins',
    AUTH_PROXY_LOGOUT_URL: 'https://auth.example.com/logout',
  });
  assert.deepEqual(c.authProxy, {
    header: 'remote-user',
    trusted: [
      { address: '127.0.0.1', prefix: 32, family: 'ipv4' },
      { address: '::1', prefix: 128, family: 'ipv6' },
    ],
    create: true,
    adminGroup: 'admins',
    groupsHeader: 'remote-groups',
    logoutUrl: 'https://auth.example.com/logout',
  });
});

test('AUTH_PROXY_* mistakes are reported with the other bad variables', () => {
  assert.deepEqual(problemsOf({ AUTH_PROXY_HEADER: 'Remote-User' }), [
    "AUTH_PROXY_HEADER needs AUTH_PROXY_TRUSTED: the proxy's addresses (e.g. 127.0.0.1/32,::1/128)",
  ]);
  assert.deepEqual(problemsOf({ AUTH_PROXY_TRUSTED: '10.0.0.0/8', AUTH_PROXY_CREATE: '1' }), [
    'AUTH_PROXY_CREATE, AUTH_PROXY_TRUSTED mean nothing without AUTH_PROXY_HEADER',
  ]);
  const many = problemsOf({
    PORT: 'x',
    AUTH_PROXY_HEADER: 'Remote User',
    AUTH_PROXY_TRUSTED: '10.0.0.0/8,::/0',
    AUTH_PROXY_LOGOUT_URL: '//evil.example/',
  });
  assert.equal(many.length, 4, many.join('\n'));
  assert.match(many.join('\n'), /AUTH_PROXY_HEADER must be a header name/);
  assert.match(many.join('\n'), /AUTH_PROXY_TRUSTED: "::\/0" would trust every address/);
  assert.match(many.join('\n'), /AUTH_PROXY_LOGOUT_URL must be an http\(s\) URL or a path/);
});
