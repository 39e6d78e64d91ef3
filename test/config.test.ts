import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.ts';

test('parseConfig has defaults that work on a laptop', () => {
  const c = parseConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.dataDir, resolve('./data'));
  assert.equal(c.baseUrl, 'http://localhost:8080');
  assert.equal(c.maxPasteBytes, 1_048_576);
  assert.equal(c.trustProxy, false);
  assert.equal(c.authFailLimitPerMinute, 30);
  assert.equal(c.logRetentionDays, 30);
});

test('parseConfig reads every variable', () => {
  const c = parseConfig({
    PORT: '9000',
    HOST: '0.0.0.0',
    DATA_DIR: '/tmp/x',
    BASE_URL: 'https://paste.example/',
    MAX_PASTE_BYTES: '10',
    TRUST_PROXY: '1',
    AUTH_FAIL_LIMIT_PER_MINUTE: '5',
    LOG_RETENTION_DAYS: '7',
  });
  assert.deepEqual(
    [c.port, c.host, c.dataDir, c.baseUrl, c.maxPasteBytes, c.trustProxy, c.authFailLimitPerMinute, c.logRetentionDays],
    [9000, '0.0.0.0', '/tmp/x', 'https://paste.example', 10, true, 5, 7],
  );
  assert.equal(parseConfig({ PORT: '9000' }).baseUrl, 'http://localhost:9000');
});

test('parseConfig tells an unset BASE_URL from one given, even one equal to the default', () => {
  assert.equal(parseConfig({}).baseUrlDefault, true);
  assert.equal(parseConfig({ BASE_URL: '' }).baseUrlDefault, true);
  assert.equal(parseConfig({ BASE_URL: 'http://localhost:8080' }).baseUrlDefault, false);
});

test('parseConfig reports every bad variable at once', () => {
  try {
    parseConfig({
      PORT: 'eighty',
      MAX_PASTE_BYTES: '-1',
      TRUST_PROXY: 'maybe',
      BASE_URL: 'ftp://x',
      HOST: 'not..a..host',
    });
    assert.fail('expected ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.problems.length, 5);
    assert.match(err.message, /HOST must be an IP address or a host name, got "not\.\.a\.\.host"/);
    assert.match(err.message, /PORT/);
  }
});

test('PASTE_CACHE_MB is 32 unless set, 0 turns the cache off, and a negative size is refused', () => {
  assert.equal(parseConfig({}).pasteCacheBytes, 32 * 1_048_576);
  assert.equal(parseConfig({ PASTE_CACHE_MB: '512' }).pasteCacheBytes, 512 * 1_048_576);
  assert.equal(parseConfig({ PASTE_CACHE_MB: '0' }).pasteCacheBytes, 0);
  assert.throws(
    () => parseConfig({ PASTE_CACHE_MB: '-1' }),
    (err) => err instanceof ConfigError && /PASTE_CACHE_MB/.test(err.message),
  );
});

test('HOST takes addresses and host names', () => {
  for (const host of ['0.0.0.0', '::', '::1', '192.168.1.20', 'localhost', 'paste.lan', 'my-box-01.example.org'])
    assert.equal(parseConfig({ HOST: host }).host, host);
  for (const host of ['not..a..host', '-lead.example', 'a b', 'host:8080', 'http://x'])
    assert.throws(() => parseConfig({ HOST: host }), /HOST must be/);
});

test('IPV6_PREFIX_LENGTH is 64 unless set, takes 32 to 128, and is reported with the other bad variables', () => {
  assert.equal(parseConfig({}).ipv6PrefixLength, 64);
  assert.equal(parseConfig({ IPV6_PREFIX_LENGTH: '56' }).ipv6PrefixLength, 56);
  assert.equal(parseConfig({ IPV6_PREFIX_LENGTH: '128' }).ipv6PrefixLength, 128);
  assert.equal(parseConfig({ IPV6_PREFIX_LENGTH: '32' }).ipv6PrefixLength, 32);
  for (const bad of ['31', '129', '/64', 'sixty-four', '-64']) {
    assert.throws(
      () => parseConfig({ IPV6_PREFIX_LENGTH: bad, PORT: 'x' }),
      (err) =>
        err instanceof ConfigError &&
        err.problems.length === 2 &&
        err.problems.some((p) => p === `IPV6_PREFIX_LENGTH must be an integer from 32 to 128, got "${bad}"`),
    );
  }
});

test('DATABASE_URL is unset by default, with a 30 s wait and a 5 s timeout', () => {
  const c = parseConfig({});
  assert.equal(c.database, null);
  assert.equal(c.databaseWaitSeconds, 30);
  assert.equal(c.databaseTimeoutMs, 5000);
  const d = parseConfig({ DATABASE_URL: '', DATABASE_WAIT_SECONDS: '0', DATABASE_TIMEOUT_MS: '100' });
  assert.deepEqual([d.database, d.databaseWaitSeconds, d.databaseTimeoutMs], [null, 0, 100]);
});

test('DATABASE_URL is read as libpq reads it: host and port, sslmode, and a unix socket folder', () => {
  const target = (url: string) => parseConfig({ DATABASE_URL: url }).database;
  assert.deepEqual(target('postgres://paste:s%40cret@db.example:5433/pastes?sslmode=require'), {
    host: 'db.example',
    port: 5433,
    socketDir: null,
    user: 'paste',
    password: 's@cret',
    database: 'pastes',
    ssl: 'require',
    describe: 'db.example:5433',
  });
  assert.deepEqual(target('postgresql://u@[::1]/d'), {
    host: '::1',
    port: 5432,
    socketDir: null,
    user: 'u',
    password: null,
    database: 'd',
    ssl: 'prefer',
    describe: '[::1]:5432',
  });
  const socket = { host: null, socketDir: '/run/postgresql', port: 5432, describe: '/run/postgresql/.s.PGSQL.5432' };
  for (const url of [
    'postgres:///pastes?host=/run/postgresql',
    'postgres://paste@/pastes?host=/run/postgresql',
    'postgres://paste@%2Frun%2Fpostgresql/pastes',
  ]) {
    const t = target(url);
    assert.deepEqual({ host: t?.host, socketDir: t?.socketDir, port: t?.port, describe: t?.describe }, socket, url);
    assert.equal(t?.database, 'pastes');
  }
});

test('a bad DATABASE_URL is reported with the other bad variables, and never with its password', () => {
  for (const [url, why] of [
    ['mysql://u:hunter2@h/d', /postgres:\/\/ or postgresql:\/\/ URL/],
    ['postgres://u:hunter2@h:99999/d', /postgres:\/\/ or postgresql:\/\/ URL/],
    ['hunter2', /postgres:\/\/ or postgresql:\/\/ URL/],
    ['postgres://u:hunter2@h/d?sslmode=verify-ca', /sslmode must be one of/],
    ['postgres://u:hunter2@h/d?synchronous_commit=off', /unsupported parameter "synchronous_commit"/],
    ['postgres://u:hunter2@h/d?host=relative', /host= must be the absolute path/],
    ['postgres://u:hunter2%zz@h/d', /% that is not followed/],
  ] as const) {
    assert.throws(
      () => parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '3601', DATABASE_TIMEOUT_MS: '99' }),
      (err) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 3, err.message);
        assert.match(err.problems[0] as string, why);
        assert.match(err.message, /DATABASE_WAIT_SECONDS must be an integer from 0 to 3600/);
        assert.match(err.message, /DATABASE_TIMEOUT_MS must be an integer from 100 to 600000/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      },
      url,
    );
  }
});

test('MAX_REVISIONS is 100 unless set, from 1 to 10000', () => {
  assert.equal(parseConfig({}).maxRevisions, 100);
  assert.equal(parseConfig({ MAX_REVISIONS: '3' }).maxRevisions, 3);
  for (const bad of ['0', '10001', 'many', '-1'])
    assert.throws(() => parseConfig({ MAX_REVISIONS: bad }), /MAX_REVISIONS must be an integer from 1 to 10000/);
});

test('SHUTDOWN_DRAIN_MS is 0 by default, 2000 behind a proxy (TRUST_PROXY=1), and any 0 to 600000 given', () => {
  assert.equal(parseConfig({}).shutdownDrainMs, 0);
  assert.equal(parseConfig({ TRUST_PROXY: '1' }).shutdownDrainMs, 2_000);
  assert.equal(parseConfig({ TRUST_PROXY: '1', SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs, 0);
  assert.equal(parseConfig({ SHUTDOWN_DRAIN_MS: '750' }).shutdownDrainMs, 750);
  for (const bad of ['-1', '1.5', 'soon', '600001'])
    assert.throws(
      () => parseConfig({ SHUTDOWN_DRAIN_MS: bad, PORT: 'x' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.some((p) => p === `SHUTDOWN_DRAIN_MS must be an integer from 0 to 600000, got "${bad}"`) &&
        err.problems.some((p) => p.startsWith('PORT')),
    );
});

test('ANONYMOUS_PASTES is off unless set; on, its limits have defaults and are checked', () => {
  assert.equal(parseConfig({}).anonymous, null);
  assert.equal(parseConfig({ ANONYMOUS_PASTES: '0', ANONYMOUS_MAX_EXPIRY: 'never' }).anonymous, null);
  assert.deepEqual(parseConfig({ ANONYMOUS_PASTES: '1' }).anonymous, {
    ratePerMinute: 10,
    maxBytes: 65_536,
    maxExpiry: '1w',
  });
  // The default size bound is never more than MAX_PASTE_BYTES.
  assert.equal(parseConfig({ ANONYMOUS_PASTES: '1', MAX_PASTE_BYTES: '1000' }).anonymous?.maxBytes, 1000);
  assert.deepEqual(
    parseConfig({
      ANONYMOUS_PASTES: '1',
      ANONYMOUS_RATE_PER_MINUTE: '3',
      ANONYMOUS_MAX_BYTES: '500',
      ANONYMOUS_MAX_EXPIRY: '1h',
    }).anonymous,
    { ratePerMinute: 3, maxBytes: 500, maxExpiry: '1h' },
  );
  for (const [name, value] of [
    ['ANONYMOUS_MAX_EXPIRY', 'never'],
    ['ANONYMOUS_MAX_EXPIRY', '2w'],
    ['ANONYMOUS_RATE_PER_MINUTE', '0'],
    ['ANONYMOUS_MAX_BYTES', '2000000'],
    ['ANONYMOUS_PASTES', 'yes'],
  ] as const) {
    assert.throws(
      () => parseConfig({ ANONYMOUS_PASTES: '1', [name]: value }),
      (err) => err instanceof ConfigError && err.message.includes(name),
      `${name}=${value}`,
    );
  }
});

test('CORS_ORIGINS is empty unless set; it takes * or a list of origins, and nothing else', () => {
  assert.deepEqual(parseConfig({}).corsOrigins, []);
  assert.deepEqual(parseConfig({ CORS_ORIGINS: '' }).corsOrigins, []);
  assert.deepEqual(parseConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  assert.deepEqual(parseConfig({ CORS_ORIGINS: 'https://app.example, http://localhost:3000' }).corsOrigins, [
    'https://app.example',
    'http://localhost:3000',
  ]);
  for (const bad of ['https://app.example/path', 'app.example', '*, https://app.example', 'ftp://x.example', 'null']) {
    assert.throws(
      () => parseConfig({ CORS_ORIGINS: bad }),
      (err) => err instanceof ConfigError && err.message.includes('CORS_ORIGINS'),
      bad,
    );
  }
});

test('MARKDOWN_REMOTE_IMAGES is off by default, on with 1, and reported when it is neither', () => {
  assert.equal(parseConfig({}).markdownRemoteImages, false);
  assert.equal(parseConfig({ MARKDOWN_REMOTE_IMAGES: '1' }).markdownRemoteImages, true);
  assert.throws(() => parseConfig({ MARKDOWN_REMOTE_IMAGES: 'yes' }), /MARKDOWN_REMOTE_IMAGES must be 0 or 1/);
});

test('FILE_STORE is unset by default; s3://BUCKET/PREFIX takes the S3_* settings with their defaults', () => {
  assert.equal(parseConfig({}).fileStore, null);
  const keys = { S3_ACCESS_KEY_ID: 'AKID', S3_SECRET_ACCESS_KEY: 'hunter2-secret' };
  assert.deepEqual(parseConfig({ FILE_STORE: 's3://pastes/files/', ...keys }).fileStore, {
    bucket: 'pastes',
    prefix: 'files',
    endpoint: null,
    region: 'us-east-1',
    accessKeyId: 'AKID',
    secretAccessKey: 'hunter2-secret',
    forcePathStyle: false,
    describe: 's3://pastes/files',
  });
  const all = parseConfig({
    FILE_STORE: 's3://my.bucket',
    S3_ENDPOINT: 'http://127.0.0.1:9000',
    S3_REGION: 'eu-west-3',
    S3_FORCE_PATH_STYLE: '1',
    ...keys,
  }).fileStore;
  assert.equal(all?.prefix, '');
  assert.equal(all?.endpoint, 'http://127.0.0.1:9000');
  assert.equal(all?.region, 'eu-west-3');
  assert.equal(all?.forcePathStyle, true);
});

test('a bad FILE_STORE or missing S3 credentials are reported with the other bad variables, never with the secret', () => {
  const keys = { S3_ACCESS_KEY_ID: 'AKID', S3_SECRET_ACCESS_KEY: 'hunter2-secret' };
  for (const [env, why] of [
    [{ FILE_STORE: 'https://bucket/prefix', ...keys }, /FILE_STORE must be s3:\/\/BUCKET\/PREFIX/],
    [{ FILE_STORE: 's3://Bad_Bucket/prefix', ...keys }, /FILE_STORE must be s3:\/\/BUCKET\/PREFIX/],
    [{ FILE_STORE: 's3:///prefix', ...keys }, /FILE_STORE must be s3:\/\/BUCKET\/PREFIX/],
    [{ FILE_STORE: 's3://bucket/p', S3_SECRET_ACCESS_KEY: 'hunter2-secret' }, /S3_ACCESS_KEY_ID must be set/],
    [{ FILE_STORE: 's3://bucket/p', S3_ACCESS_KEY_ID: 'AKID' }, /S3_SECRET_ACCESS_KEY must be set/],
    [{ FILE_STORE: 's3://bucket/p', S3_ENDPOINT: 'minio:9000', ...keys }, /S3_ENDPOINT must be an http\(s\) URL/],
    [{ FILE_STORE: 's3://bucket/p', S3_REGION: 'EU WEST', ...keys }, /S3_REGION must be a region name/],
    [{ FILE_STORE: 's3://bucket/p', S3_FORCE_PATH_STYLE: 'yes', ...keys }, /S3_FORCE_PATH_STYLE must be 0 or 1/],
  ] as const) {
    assert.throws(
      () => parseConfig({ ...env, PORT: 'abc' }),
      (err) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 2, err.message);
        assert.match(err.message, why);
        assert.match(err.message, /PORT must be an integer/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      },
      JSON.stringify(env),
    );
  }
});

test('OIDC_* is off unless OIDC_ISSUER is set, then has the defaults README names', () => {
  assert.equal(parseConfig({}).oidc, null);
  assert.deepEqual(
    parseConfig({ OIDC_ISSUER: 'https://id.example/application/o/paste/', OIDC_CLIENT_ID: 'paste' }).oidc,
    {
      issuer: 'https://id.example/application/o/paste/',
      clientId: 'paste',
      clientSecret: null,
      scopes: 'openid profile email',
      usernameClaim: 'preferred_username',
      groupsClaim: 'groups',
      adminGroup: null,
      create: false,
      buttonLabel: 'Sign in with SSO',
    },
  );
  const all = parseConfig({
    OIDC_ISSUER: 'http://127.0.0.1:9000',
    OIDC_CLIENT_ID: 'c',
    OIDC_CLIENT_SECRET: 's',
    OIDC_SCOPES: 'openid  groups',
    OIDC_USERNAME_CLAIM: 'nickname',
    OIDC_GROUPS_CLAIM: 'roles',
    OIDC_ADMIN_GROUP: 'ops',
    OIDC_CREATE: '1',
    OIDC_BUTTON_LABEL: 'Use Keycloak',
  }).oidc;
  assert.deepEqual(
    [
      all?.clientSecret,
      all?.scopes,
      all?.usernameClaim,
      all?.groupsClaim,
      all?.adminGroup,
      all?.create,
      all?.buttonLabel,
    ],
    ['s', 'openid groups', 'nickname', 'roles', 'ops', true, 'Use Keycloak'],
  );
});

test('OIDC_ISSUER needs OIDC_CLIENT_ID, https (http only on loopback) and the openid scope', () => {
  assert.throws(
    () => parseConfig({ OIDC_ISSUER: 'http://id.example', OIDC_SCOPES: 'profile', OIDC_CREATE: 'yes' }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /OIDC_ISSUER must be an https URL \(http only on this machine\), got "http:\/\/id\.example"/.test(e.message) &&
      /OIDC_ISSUER needs OIDC_CLIENT_ID/.test(e.message) &&
      /OIDC_SCOPES must include "openid"/.test(e.message) &&
      /OIDC_CREATE must be 0 or 1/.test(e.message),
  );
  assert.throws(
    () => parseConfig({ OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'c' }),
    /OIDC_ISSUER must be an https URL/,
  );
});
