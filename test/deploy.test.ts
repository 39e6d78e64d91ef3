import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HAPROXY_CFG } from './helpers/haproxy.ts';
import { ROOT } from './helpers/server.ts';
import { needs, tool } from './helpers/tools.ts';

/**
 * deploy/compose.yaml cannot run here (no Docker), so what it says is checked against what is
 * tested: the same haproxy.cfg, the variables that file needs, the Dockerfile, the drain.
 * Docker itself would parse the YAML; these checks read its lines.
 */
const compose = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
const cfg = readFileSync(HAPROXY_CFG, 'utf8');

/** `key: value` of every line of the compose file (the last one wins), quotes taken off. */
const settings = new Map(
  [...compose.matchAll(/^\s*([A-Za-z_][\w-]*):[ \t]+(.+?)\s*$/gm)].map((m) => [
    m[1] as string,
    (m[2] as string).replace(/^"(.*)"$/, '$1'),
  ]),
);
const setting = (key: string): string => {
  const v = settings.get(key);
  assert.ok(v !== undefined, `deploy/compose.yaml sets no ${key}`);
  return v;
};
const services = [...compose.slice(compose.indexOf('\nservices:')).matchAll(/^ {2}([a-z][\w-]*):/gm)].map((m) => m[1]);

describe('deploy/compose.yaml runs what the tests run (README, Running several instances)', () => {
  test('it is indented with spaces and mounts deploy/haproxy.cfg, the file test/helpers/cluster.ts runs', () => {
    assert.doesNotMatch(compose, /\t/);
    assert.deepEqual(services.slice(0, 4), ['db', 'paste1', 'paste2', 'proxy']);
    const mount = /^\s*- (\.\/haproxy\.cfg):\/usr\/local\/etc\/haproxy\/haproxy\.cfg:ro$/m.exec(compose);
    assert.ok(mount !== null, 'the proxy does not mount ./haproxy.cfg where the haproxy image reads it');
    assert.equal(join(ROOT, 'deploy', mount[1] as string), HAPROXY_CFG);
  });

  test('the proxy is given every variable haproxy.cfg needs, naming the instances by service and port', () => {
    const needed = [...cfg.replace(/^\s*#.*$/gm, '').matchAll(/"\$\{([A-Z_0-9]+)\}"/g)].map((m) => m[1] as string);
    assert.deepEqual(needed.sort(), ['PASTE_INSTANCE_1', 'PASTE_INSTANCE_2', 'PASTE_LISTEN']);
    for (const name of needed) setting(name);
    const port = /\bPORT=(\d+)/.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    assert.equal(setting('PASTE_INSTANCE_1'), `paste1:${port}`);
    assert.equal(setting('PASTE_INSTANCE_2'), `paste2:${port}`);
    assert.match(compose, /^\s*- "8080:8080"$/m);
    assert.equal(setting('PASTE_LISTEN'), ':8080');
  });

  test('haproxy accepts haproxy.cfg with the values compose gives it', needs('haproxy'), () => {
    const env = Object.fromEntries(
      ['PASTE_LISTEN', 'PASTE_INSTANCE_1', 'PASTE_INSTANCE_2', 'PASTE_STATS'].map((k) => [k, setting(k)]),
    );
    const out = execFileSync(tool('haproxy'), ['-c', '-f', HAPROXY_CFG], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    assert.match(out, /Configuration file is valid/);
  });

  test('the instances are built from the Dockerfile and run behind the proxy on the database service', () => {
    assert.equal(setting('context'), '..');
    assert.ok(existsSync(join(ROOT, 'deploy', setting('context'), setting('dockerfile'))));
    assert.equal(setting('TRUST_PROXY'), '1');
    assert.equal(new URL(setting('DATABASE_URL')).host, 'db:5432');
    assert.equal(setting('POSTGRES_DB'), new URL(setting('DATABASE_URL')).pathname.slice(1));
  });

  test('the drain outlasts two of the proxy checks that take an instance out, and Docker waits for it', () => {
    const inter = Number(/\binter (\d+)ms\b/.exec(cfg)?.[1]);
    const fall = Number(/\bfall (\d+)\b/.exec(cfg)?.[1]);
    const drain = Number(setting('SHUTDOWN_DRAIN_MS'));
    assert.ok(inter > 0 && fall > 0 && drain >= 2 * inter * fall, JSON.stringify({ inter, fall, drain }));
    // The drain, then SHUTDOWN_TIMEOUT_MS (10 s by default) for requests in flight.
    assert.ok(Number(/^(\d+)s$/.exec(setting('stop_grace_period'))?.[1]) * 1000 >= drain + 10_000);
  });
});
