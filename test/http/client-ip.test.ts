import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientKey } from '../../src/http/client-ip.ts';

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
