import type { Health } from './backend.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isHastePath } from './api/haste.ts';
import { clientIp, clientKey } from './http/client-ip.ts';
import { json, type Reply } from './http/reply.ts';
import type { RequestIds } from './http/request-id.ts';
import { respond } from './http/respond.ts';
import type { Served } from './pipeline/run.ts';
import { staticAsset } from './web/static.ts';

export interface AppSides {
  /** Everything under /api/: tokens, JSON, the API log (api/side.ts). */
  api: Served;
  /** Every other page: sessions, HTML (web/side.ts). */
  web: Served;
  trustProxy: boolean;
  /** IPV6_PREFIX_LENGTH: an IPv6 client's per-IP budgets are its network's (http/client-ip.ts). */
  ipv6PrefixLength: number;
  /** Each request's id, sent back as `X-Request-Id` on every answer. */
  ids: RequestIds;
  /** `/metrics` on this port (README, Metrics), when METRICS_TOKEN is set. */
  metrics?: (req: IncomingMessage) => Reply;
  /** What `/healthz` adds about the storage (backend.ts); absent: always healthy. */
  health?: () => Health;
  /** Runs a request's handling in the storage's request scope (backend.ts, Storage.scope). */
  scope?: <T>(fn: () => T) => T;
}

/**
 * The request listener. `/healthz` and `/static/` answer at once; every other request gets
 * one context, built here, and goes to a side: `/api/` to the API, the rest to the web,
 * whose steps decide the answer (pipeline/run.ts). It never listens itself; server.ts does.
 */
export function createApp(sides: AppSides): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    const id = sides.ids.of(req);
    if (path === '/healthz') {
      const health = sides.health?.() ?? { ok: true };
      return respond(res, json(health, health.ok ? 200 : 503), { 'cache-control': 'no-store', 'x-request-id': id });
    }
    if (path === '/metrics' && sides.metrics !== undefined)
      return respond(res, sides.metrics(req), { 'x-request-id': id });
    // Browsers ask for /favicon.ico on pages without a link to an icon (the raw text page).
    const asset = path.startsWith('/static/') || path === '/favicon.ico' ? staticAsset(req, path, query) : null;
    if (asset !== null) return respond(res, asset, { 'x-request-id': id });
    // hastebin's API (api/haste.ts) is the API's too, at the paths its clients use.
    const side = path.startsWith('/api/') || isHastePath(path) ? sides.api : sides.web;
    const ip = clientIp(req, sides.trustProxy);
    const key = clientKey(ip, sides.ipv6PrefixLength);
    if (sides.scope === undefined) side(req, res, path, query, ip, key, id);
    else sides.scope(() => side(req, res, path, query, ip, key, id));
  };
}
