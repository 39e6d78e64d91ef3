import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { APP_JS } from './assets/app-js.ts';
import { CSS_BASE } from './assets/css-base.ts';
import { CSS_COMPONENTS } from './assets/css-components.ts';

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect x="2" y="1" width="20" height="22" rx="5" fill="#4f46e5"/><path d="M7.5 8h9M7.5 12h9M7.5 16h5.5" stroke="#fff" stroke-width="2" stroke-linecap="round"/></svg>`;

/*
 * The assets live in TypeScript modules rather than files beside the code, so the compiled
 * build (which copies only dist/) carries them, and they are read once, not per request.
 */
function asset(type: string, text: string): Asset {
  const body = Buffer.from(text);
  return { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

const ASSETS = new Map<string, Asset>([
  ['/static/app.css', asset('text/css; charset=utf-8', CSS_BASE + CSS_COMPONENTS)],
  ['/static/app.js', asset('text/javascript; charset=utf-8', APP_JS)],
  ['/static/icon.svg', asset('image/svg+xml', ICON_SVG)],
]);

const version = (path: string): string => (ASSETS.get(path) as Asset).etag.slice(1, 9);

/** Asset addresses carry their content's hash, so they can be cached for good. */
export const ASSET_URLS = {
  css: `/static/app.css?v=${version('/static/app.css')}`,
  js: `/static/app.js?v=${version('/static/app.js')}`,
  icon: `/static/icon.svg?v=${version('/static/icon.svg')}`,
} as const;

/**
 * Serves a static asset, or returns false when `path` names none. This is the one web
 * response not written by `respond`, whose replies only know JSON, text and HTML types,
 * and a stylesheet or script under `nosniff` must carry its own type.
 */
export function serveStatic(req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean {
  const a = ASSETS.get(path);
  if (a === undefined) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-length': '0' }).end();
    return true;
  }
  const immutable = query === `v=${a.etag.slice(1, 9)}`;
  const headers = {
    'content-type': a.type,
    etag: a.etag,
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'",
  };
  if (req.headers['if-none-match'] === a.etag) {
    res.writeHead(304, headers).end();
    return true;
  }
  res.writeHead(200, { ...headers, 'content-length': String(a.body.length) });
  res.end(req.method === 'HEAD' ? undefined : a.body);
  return true;
}
