import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../helpers/pg-cluster.ts';
import { cleanup, startServer, type TestServer } from '../helpers/server.ts';
import { skipWithout, tool, willSkip } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';
import { WebClient, type WebRes } from '../helpers/web-client.ts';

/**
 * The service behind Debian's nginx, which authenticates with auth_basic and passes the
 * user on in Remote-User (and groups in Remote-Groups), as Authelia or oauth2-proxy would
 * (README, Sign-in by a proxy). nginx runs as a child with its own prefix folder and port.
 */
/** nginx connects to the service from this address (proxy_bind), the only one trusted. */
const PROXY_ADDRESS = '127.0.0.3';

let app: TestServer;
let nginx: ChildProcess;
let dir: string;
let port: number;

/** An htpasswd line nginx accepts: openssl's apr1 hash when openssl is there, else nginx's {PLAIN}. */
function htpasswdLine(user: string, password: string): string {
  try {
    return `${user}:${execFileSync('openssl', ['passwd', '-apr1', password], { encoding: 'utf8' }).trim()}`;
  } catch {
    // No openssl on this machine: nginx reads a plain password marked as such.
    return `${user}:{PLAIN}${password}`;
  }
}

async function listening(p: number, exited: () => boolean): Promise<void> {
  let up = false;
  const accepts = (): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      const sock = connect(p, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
  await until(async () => exited() || (up = await accepts()), { what: `nginx on port ${p}` }).catch(() => undefined);
  if (up) return;
  const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
  throw new Error(`nginx did not start:\n${log}`);
}

before(async () => {
  if (willSkip('nginx')) return;
  const nginxPath = tool('nginx');
  app = await startServer({
    env: {
      AUTH_PROXY_HEADER: 'Remote-User',
      AUTH_PROXY_TRUSTED: `${PROXY_ADDRESS}/32`,
      AUTH_PROXY_CREATE: '1',
      AUTH_PROXY_ADMIN_GROUP: 'admins',
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'paste-nginx-'));
  // nginx's workers may run as another user (CI runs as root): they read the password file.
  await chmod(dir, 0o755);
  port = await freePort();
  await writeFile(
    join(dir, 'htpasswd'),
    `${htpasswdLine('alice', 'alice-secret')}\n${htpasswdLine('bob', 'bob-secret')}\n`,
    { mode: 0o644 },
  );
  const conf = `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $remote_user $groups { alice "dev,admins"; default "dev"; }
  server {
    listen 127.0.0.1:${port};
    location / {
      auth_basic "paste";
      auth_basic_user_file ${dir}/htpasswd;
      proxy_pass http://127.0.0.1:${app.port};
      proxy_bind ${PROXY_ADDRESS};
      # Set, never passed through: what the visitor sends in these headers is replaced.
      proxy_set_header Remote-User $remote_user;
      proxy_set_header Remote-Groups $groups;
    }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  nginx = spawn(nginxPath, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: 'ignore',
  });
  let gone = false;
  nginx.once('exit', () => (gone = true));
  nginx.once('error', () => (gone = true));
  await listening(port, () => gone);
});

after(async () => {
  if (nginx !== undefined && nginx.exitCode === null && nginx.signalCode === null) {
    const exited = new Promise((resolve) => nginx.once('exit', resolve));
    nginx.kill('SIGTERM');
    await exited;
  }
  if (dir !== undefined) await cleanup(dir);
});

const basic = (user: string, password: string): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const signedInAs = (r: WebRes): string | undefined => /title="Log out ([^"]+)"/.exec(r.text)?.[1];

test('behind nginx auth_basic, the user nginx vouches for is signed in, with the groups nginx sends', async (t) => {
  if (skipWithout(t, 'nginx')) return;
  const viaNginx = { port };
  assert.equal((await new WebClient(viaNginx).get('/my')).status, 401, 'nginx asks for credentials first');
  assert.equal((await new WebClient(viaNginx).get('/my', basic('alice', 'wrong'))).status, 401);

  const alice = new WebClient(viaNginx);
  const mine = await alice.get('/my', basic('alice', 'alice-secret'));
  assert.equal(mine.status, 200);
  assert.equal(signedInAs(mine), 'alice');
  assert.equal((await alice.get('/admin/users', basic('alice', 'alice-secret'))).status, 200, 'in the admins group');

  // What the visitor writes into the headers nginx sets is replaced, not believed.
  const bob = new WebClient(viaNginx);
  const forged = { ...basic('bob', 'bob-secret'), 'remote-user': 'alice', 'remote-groups': 'admins' };
  assert.equal(signedInAs(await bob.get('/', forged)), 'bob');
  assert.equal((await bob.get('/admin/users', forged)).status, 403);
  const made = await bob.request(
    'POST',
    '/',
    { _csrf: bob.csrf, content: 'pasted through nginx', language: 'auto', privacy: 'public', expiry: 'never' },
    basic('bob', 'bob-secret'),
  );
  assert.equal(made.status, 303, made.text);
  assert.match(made.location ?? '', /^\/p\/[A-Za-z0-9]{10}$/);
  assert.match(await readFile(join(dir, 'access.log'), 'utf8'), /"POST \/ HTTP\/1\.[01]" 303 .*/);
});

test('the same header sent to the server directly, past nginx, does nothing', async (t) => {
  if (skipWithout(t, 'nginx')) return;
  const direct = new WebClient(app);
  const r = await direct.get('/my', { 'remote-user': 'alice', 'remote-groups': 'admins' });
  assert.match(r.location ?? '', /^\/login/);
  assert.equal((await direct.get('/admin/users', { 'remote-user': 'alice' })).status, 302);
  assert.match(app.output(), /the remote-user header came from (::ffff:)?127\.0\.0\.1, not from AUTH_PROXY_TRUSTED/);
});
