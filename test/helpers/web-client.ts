import assert from 'node:assert/strict';
import { req, type Res } from './server.ts';

/** A page as the client saw it, with the CSRF token of its forms when it has any. */
export interface WebRes extends Res {
  csrf: string | undefined;
  location: string | undefined;
}

const CSRF_RE = /name="_csrf" value="([^"]*)"/;

/**
 * A browser stand-in over raw node:http: keeps cookies (a tiny jar that honours
 * Max-Age=0 deletion) and remembers the CSRF token of the last page it loaded.
 */
export class WebClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(private readonly server: { port: number; localAddress?: string }) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    fields?: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<WebRes> {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size > 0) h['cookie'] = this.cookieHeader();
    const opts = fields === undefined ? { headers: h } : { headers: h, body: fields, form: true };
    const r = await req(this.server, method, path, opts);
    const set = r.headers['set-cookie'] ?? [];
    for (const line of Array.isArray(set) ? set : [set]) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/;\s*Max-Age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const csrf = CSRF_RE.exec(r.text)?.[1];
    if (csrf !== undefined) this.csrf = csrf;
    const location = r.headers['location'];
    return { ...r, csrf, location: typeof location === 'string' ? location : undefined };
  }

  get(path: string, headers?: Record<string, string>): Promise<WebRes> {
    return this.request('GET', path, undefined, headers);
  }

  /** POSTs a form with the current CSRF token, unless the fields name `_csrf` themselves. */
  post(path: string, fields: Record<string, string>): Promise<WebRes> {
    return this.request('POST', path, { _csrf: this.csrf, ...fields });
  }

  /** POSTs a form without any CSRF token. */
  postBare(path: string, fields: Record<string, string>): Promise<WebRes> {
    return this.request('POST', path, fields);
  }
}

/** Registers through the form (the first user becomes admin) and stays logged in. */
export async function register(c: WebClient, name: string, password = 'password123'): Promise<WebRes> {
  await c.get('/register');
  const r = await c.post('/register', { name, password, confirm: password });
  assert.equal(r.status, 303, r.text);
  await c.get('/');
  return r;
}

export async function login(c: WebClient, name: string, password = 'password123'): Promise<WebRes> {
  await c.get('/login');
  const r = await c.post('/login', { name, password, next: '/' });
  assert.equal(r.status, 303, r.text);
  await c.get('/');
  return r;
}

/** Creates a paste through the home page form; returns its hash. */
export async function createViaForm(c: WebClient, fields: Record<string, string>): Promise<string> {
  await c.get('/');
  const r = await c.post('/', { language: 'auto', privacy: 'public', expiry: 'never', highlight: '1', ...fields });
  assert.equal(r.status, 303, r.text);
  const hash = /^\/p\/([A-Za-z0-9]{10})$/.exec(r.location ?? '')?.[1];
  assert.ok(hash !== undefined, `unexpected location ${r.location}`);
  return hash;
}

/** One client per name, each registered (and so logged in) in order: the first becomes admin. */
export async function registerAll<const N extends readonly string[]>(
  s: ConstructorParameters<typeof WebClient>[0],
  ...names: N
): Promise<{ [K in keyof N]: WebClient }> {
  const clients: WebClient[] = [];
  for (const name of names) {
    const c = new WebClient(s);
    await register(c, name);
    clients.push(c);
  }
  return clients as { [K in keyof N]: WebClient };
}
