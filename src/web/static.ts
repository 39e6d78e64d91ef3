import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Reply } from '../http/reply.ts';
import { APP_JS } from './assets/app-js.ts';
import { CLIENT_PATH, clientAsset } from './client-asset.ts';
import { CSS_BASE } from './assets/css-base.ts';
import { CSS_COMPONENTS } from './assets/css-components.ts';

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect x="2" y="1" width="20" height="22" rx="5" ' +
  'fill="#4f46e5"/><path d="M7.5 8h9M7.5 12h9M7.5 16h5.5" stroke="#fff" stroke-width="2" ' +
  'stroke-linecap="round"/></svg>';

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
  ['/favicon.ico', asset('image/svg+xml', ICON_SVG)],
]);

const version = (path: string): string => (ASSETS.get(path) as Asset).etag.slice(1, 9);

/** Asset addresses carry their content's hash, so they can be cached for good. */
export const ASSET_URLS = {
  css: `/static/app.css?v=${version('/static/app.css')}`,
  js: `/static/app.js?v=${version('/static/app.js')}`,
  icon: `/static/icon.svg?v=${version('/static/icon.svg')}`,
} as const;

/** The reply for a static asset, or null when `path` names none. */
export function staticAsset(req: IncomingMessage, path: string, query: string): Reply | null {
  // The encrypted pastes' module is bundled on first use (client-asset.ts).
  const a =
    ASSETS.get(path) ??
    (path === CLIENT_PATH ? { type: 'text/javascript; charset=utf-8', ...clientAsset() } : undefined);
  if (a === undefined) return null;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return {
      kind: 'bytes',
      status: 405,
      contentType: 'text/plain; charset=utf-8',
      body: Buffer.alloc(0),
      headers: { allow: 'GET, HEAD' },
    };
  }
  const immutable = query === `v=${a.etag.slice(1, 9)}`;
  const headers = {
    etag: a.etag,
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'",
  };
  const status = req.headers['if-none-match'] === a.etag ? 304 : 200;
  return { kind: 'bytes', status, contentType: a.type, body: a.body, headers };
}
