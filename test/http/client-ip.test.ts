import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { addressOfHop, clientIp, clientKey } from '../../src/http/client-ip.ts';

describe('clientKey', () => {
  const cases: [ip: string, prefix: number, key: string][] = [
    ['192.0.2.7', 64, '192.0.2.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', 64, '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0000:0000:0000:0009', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', 64, '2001:db8:1:3::/64'],
    ['2001:db8:1:2:ffff::1', 56, '2001:db8:1::/56'],
    ['2001:db8:1:2ff::1', 56, '2001:db8:1:200::/56'],
    ['2001:db8:abcd:1234::1', 48, '2001:db8:abcd::/48'],
    ['2001:db8:abcd:1234::1', 32, '2001:db8::/32'],
    ['2001:db8::ab:1', 128, '2001:db8::ab:1/128'],
    ['2001:db8:0:0:1:0:0:1', 128, '2001:db8::1:0:0:1/128'],
    ['fe80::1%eth0', 64, 'fe80::/64'],
    ['::1', 64, '::/64'],
    ['::', 64, '::/64'],
    ['::ffff:198.51.100.4', 64, '198.51.100.4'],
    ['::FFFF:198.51.100.4', 64, '198.51.100.4'],
    ['0:0:0:0:0:ffff:c633:6404', 64, '198.51.100.4'],
    ['64:ff9b::198.51.100.4', 96, '64:ff9b::/96'],
    ['2001:db8:1:2:3:4:5:6', 64, '2001:db8:1:2::/64'],
    ['not an address', 64, 'not an address'],
    ['1:2:3', 64, '1:2:3'],
    ['', 64, ''],
  ];
  for (const [ip, prefix, key] of cases) {
    test(`keys ${JSON.stringify(ip)} at /${prefix} as ${JSON.stringify(key)}`, () => {
      assert.equal(clientKey(ip, prefix), key);
    });
  }

  test('gives every address of one /64 the same key, and the next /64 another', () => {
    const keys = new Set(
      ['2001:db8:5:6::1', '2001:db8:5:6:1234::', '2001:db8:5:6:ffff:ffff:ffff:ffff'].map((ip) => clientKey(ip, 64)),
    );
    assert.equal(keys.size, 1);
    assert.notEqual(clientKey('2001:db8:5:7::1', 64), clientKey('2001:db8:5:6::1', 64));
  });
});

describe('addressOfHop', () => {
  const cases: [hop: string, address: string | null][] = [
    ['192.0.2.7', '192.0.2.7'],
    [' 192.0.2.7 ', '192.0.2.7'],
    ['192.0.2.7:1000', '192.0.2.7'],
    ['192.0.2.7:65535', '192.0.2.7'],
    ['2001:db8::1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[::ffff:192.0.2.7]:80', '::ffff:192.0.2.7'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[fe80::1%eth0]:8080', 'fe80::1'],
    // Bare, an IPv6 address's last group is its own: no port is cut from it.
    ['2001:db8::1:443', '2001:db8::1:443'],
    ['192.0.2.7:', null],
    ['192.0.2.7:123456', null],
    ['192.0.2.7:x', null],
    ['192.0.2.007', null],
    ['192.0.2', null],
    ['999.0.2.7', null],
    ['[192.0.2.7]', null],
    ['[2001:db8::1', null],
    ['2001:db8::1]:443', null],
    ['[2001:db8::g]:443', null],
    ['unknown', null],
    ['_hidden', null],
    ['example.com', null],
    ['', null],
  ];
  for (const [hop, address] of cases) {
    test(`reads ${JSON.stringify(hop)} as ${JSON.stringify(address)}`, () => {
      assert.equal(addressOfHop(hop), address);
    });
  }
});

describe('clientIp', () => {
  const request = (xff: string | string[] | undefined, peer = '10.0.0.1'): IncomingMessage =>
    ({ headers: xff === undefined ? {} : { 'x-forwarded-for': xff }, socket: { remoteAddress: peer } }) as never;
  const cases: [xff: string | string[] | undefined, trust: boolean, ip: string][] = [
    ['192.0.2.7:1011', true, '192.0.2.7'],
    ['198.51.100.1, 192.0.2.7:1000', true, '192.0.2.7'],
    [['198.51.100.1', '[2001:db8::7]:443'], true, '2001:db8::7'],
    ['192.0.2.7, not-an-address', true, '10.0.0.1'],
    ['192.0.2.7,', true, '10.0.0.1'],
    ['::ffff:192.0.2.7', true, '192.0.2.7'],
    [undefined, true, '10.0.0.1'],
    ['192.0.2.7', false, '10.0.0.1'],
  ];
  for (const [xff, trust, ip] of cases) {
    test(`takes ${ip} from X-Forwarded-For ${JSON.stringify(xff)}${trust ? '' : ' when no proxy is trusted'}`, () => {
      assert.equal(clientIp(request(xff), trust), ip);
    });
  }
  test('falls back to a mapped peer address as its IPv4 address', () => {
    assert.equal(clientIp(request('nonsense', '::ffff:10.0.0.9'), true), '10.0.0.9');
  });
});
