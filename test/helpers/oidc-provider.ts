import { generateKeyPair, type JsonWebKey, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import { promisify } from 'node:util';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/** A user at the test provider: the login typed in its form is the `sub`. */
export interface ProviderUser {
  preferred_username?: string;
  groups?: string[];
}

/**
 * What the provider does wrong on purpose, for the callback's checks (README, Sign-in with OpenID
 * Connect); `userinfo-only` is not wrong: the ID token carries no name or groups, as Authelia's.
 * `unpublished-key`: its jwks_uri publishes, under its signing key's id, another key.
 */
export type Tamper = null | 'expired' | 'other-client' | 'nonce' | 'userinfo-only' | 'unpublished-key';

export const CLIENT_ID = 'paste';
export const CLIENT_SECRET = 'paste-client-secret-for-tests';
export const SCOPES = 'openid profile email groups';

/** A new RSA key pair as a private JWK with its own key id, for the provider to sign with. */
async function signingKey(): Promise<JsonWebKey> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig' };
}

/**
 * oidc-provider (OpenID Certified) in this process, on loopback: a confidential client
 * `paste` for the apps registered with `register`, a second client `other`, the
 * development login form (any login, any password; the login is the `sub`), and consent
 * given at once. The provider is built at its first request, once every app's redirect
 * URI is known. Claims go in the ID token as most providers send them (conformIdTokenClaims off).
 */
export class TestProvider {
  readonly users = new Map<string, ProviderUser>();
  tamper: Tamper = null;
  #apps: string[] = [];
  #provider: Provider | null = null;
  #handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  #keys: JsonWebKey[];

  constructor(
    readonly issuer: string,
    key: JsonWebKey,
  ) {
    this.#keys = [key];
  }

  /** The ids of the keys the provider signs with (and publishes when not tampered with). */
  get keyIds(): string[] {
    return this.#keys.map((k) => k.kid as string);
  }

  /**
   * A key rotation: the provider starts again, on the same issuer and with the same clients, with
   * only a new signing key; the old one is no longer published.
   */
  async rotate(): Promise<void> {
    this.#keys = [await signingKey()];
    this.#provider = null;
    this.#handler = null;
  }

  /** The env that points an app at this provider. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      OIDC_ISSUER: this.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_SCOPES: SCOPES,
      ...extra,
    };
  }

  /** Registers an app's redirect URI (BASE_URL/login/oidc/callback); before the provider's first request. */
  register(appUrl: string): void {
    if (this.#provider !== null) throw new Error('register every app before the first sign-in');
    this.#apps.push(appUrl);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const handler = (this.#handler ??= this.#build().callback());
    handler(req, res);
  }

  #build(): Provider {
    const users = this.users;
    const ttl = (): number => (this.tamper === 'expired' ? -3600 : 3600);
    const client = (id: string) => ({
      client_id: id,
      client_secret: id === CLIENT_ID ? CLIENT_SECRET : `${id}-secret`,
      redirect_uris: this.#apps.map((u) => `${u}/login/oidc/callback`),
      post_logout_redirect_uris: this.#apps.map((u) => `${u}/`),
      response_types: ['code'],
      grant_types: ['authorization_code'],
    });
    const provider = new Provider(this.issuer, {
      clients: [client(CLIENT_ID), client('other')],
      claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      pkce: { required: () => true },
      ttl: { IdToken: ttl },
      cookies: { keys: ['test-provider-cookie-key'] },
      jwks: { keys: this.#keys },
      findAccount: (_ctx: unknown, id: string) => ({
        accountId: id,
        claims: () => {
          const u = users.get(id) ?? {};
          return {
            sub: id,
            ...(u.preferred_username === undefined ? {} : { preferred_username: u.preferred_username }),
            ...(u.groups === undefined ? {} : { groups: u.groups }),
            email: `${id}@example.test`,
          };
        },
      }),
      // Consent is given at once: the test signs in at the login form only.
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const { oidc } = ctx;
        const clientId = oidc.client?.clientId ?? '';
        const grantId = oidc.result?.['consent']?.grantId ?? oidc.session?.grantIdFor(clientId);
        if (grantId) return oidc.provider.Grant.find(grantId);
        const grant = new oidc.provider.Grant({ clientId, accountId: oidc.session?.accountId ?? '' });
        grant.addOIDCScope(SCOPES);
        await grant.save();
        return grant;
      },
    });
    // A tampered ID token is one the provider itself issues and signs, for another client or with another nonce.
    provider.use(async (ctx, next) => {
      await next();
      const body = ctx.body as Record<string, unknown> | undefined;
      if (ctx.path === '/jwks' && this.tamper === 'unpublished-key') {
        // The published key under each key id is a stranger's, so the signing key is never published.
        const stranger = await signingKey();
        const keys = (body?.['keys'] ?? []) as Record<string, unknown>[];
        ctx.body = { keys: keys.map((k) => ({ ...k, n: stranger.n, e: stranger.e })) };
        return;
      }
      const reissued = this.tamper === 'other-client' || this.tamper === 'nonce' || this.tamper === 'userinfo-only';
      if (ctx.path !== '/token' || !reissued) return;
      if (typeof body?.['id_token'] !== 'string') return;
      const claims = JSON.parse(Buffer.from(body['id_token'].split('.')[1] ?? '', 'base64url').toString()) as Record<
        string,
        unknown
      >;
      const to = await provider.Client.find(this.tamper === 'other-client' ? 'other' : CLIENT_ID);
      const token = new provider.IdToken({ sub: claims['sub'] }, { client: to, ctx: ctx as KoaContextWithOIDC });
      for (const [k, v] of Object.entries(claims))
        if (!['iss', 'aud', 'exp', 'iat', 'azp'].includes(k)) token.set(k, v);
      if (this.tamper === 'userinfo-only')
        for (const k of ['preferred_username', 'groups', 'email']) token.set(k, undefined);
      if (this.tamper === 'nonce') token.set('nonce', 'not-the-nonce-of-this-sign-in');
      ctx.body = { ...body, id_token: await token.issue({ use: 'idtoken' }) };
    });
    this.#provider = provider;
    return provider;
  }
}

/** Every provider a test file started, closed after its tests (set up once, at import, as test/helpers/server.ts does). */
const running = new Set<Server>();
after(() =>
  Promise.all(
    [...running].map((server) => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  ),
);

/** Starts a provider on a free loopback port; stopped after the file's tests. */
export async function startOidcProvider(): Promise<TestProvider> {
  let op: TestProvider | null = null;
  const server = createServer((req, res) => op?.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.add(server);
  op = new TestProvider(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, await signingKey());
  return op;
}

/** A cookie jar per host:port and redirects followed by hand, for the provider's pages and the app's. */
export class Browser {
  readonly #jars = new Map<string, Map<string, string>>();

  async fetch(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<BrowserRes> {
    const u = new URL(url);
    const jar = this.#jar(u.host);
    const headers: Record<string, string> = {};
    if (jar.size > 0) headers['cookie'] = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body = '';
    if (init.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['origin'] = u.origin;
      body = new URLSearchParams(init.form).toString();
    }
    const method = init.method ?? (init.form === undefined ? 'GET' : 'POST');
    const r = await fetch(u, { method, headers, redirect: 'manual', ...(init.form === undefined ? {} : { body }) });
    for (const line of r.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (/;\s*(Max-Age=0\b|expires=Thu, 01 Jan 1970)/i.test(line)) jar.delete(name);
      else jar.set(name, pair.slice(eq + 1).trim());
    }
    const location = r.headers.get('location');
    return {
      status: r.status,
      text: await r.text(),
      url: u.href,
      location: location === null ? null : new URL(location, u).href,
    };
  }

  /** Follows redirects from `url` until a page that is not one. */
  async follow(url: string, init: { form?: Record<string, string> } = {}): Promise<BrowserRes> {
    let r = await this.fetch(url, init);
    for (let i = 0; i < 20 && r.location !== null && r.status >= 300 && r.status < 400; i++)
      r = await this.fetch(r.location);
    return r;
  }

  cookie(host: string, name: string): string | undefined {
    return this.#jar(host).get(name);
  }

  #jar(host: string): Map<string, string> {
    let jar = this.#jars.get(host);
    if (jar === undefined) this.#jars.set(host, (jar = new Map()));
    return jar;
  }
}

export interface BrowserRes {
  status: number;
  text: string;
  url: string;
  location: string | null;
}

/** Signs in at the provider's login form on `page` (its development form: any password). */
export async function submitLogin(b: Browser, page: BrowserRes, login: string): Promise<BrowserRes> {
  const action = /<form[^>]*action="([^"]+)"/.exec(page.text)?.[1];
  if (action === undefined || !/name="login"/.test(page.text))
    throw new Error(
      `not the provider's login form: ${page.url}\n${/<main[\s\S]*<\/main>/.exec(page.text)?.[0] ?? page.text.slice(0, 800)}`,
    );
  return b.follow(new URL(action, page.url).href, { form: { prompt: 'login', login, password: 'any password' } });
}
