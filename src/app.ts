import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleApi, type ApiRoute } from './api/pipeline.ts';
import { apiV1Routes } from './api/v1/routes.ts';
import type { AppDeps } from './deps.ts';
import { json } from './http/reply.ts';
import { respond } from './http/respond.ts';
import { clientIp } from './http/client-ip.ts';
import { Router } from './http/router.ts';
import type { WebRoute } from './web/context.ts';
import { handleWeb } from './web/pipeline.ts';
import { webRoutes } from './web/routes.ts';
import { staticAsset } from './web/static.ts';

/**
 * The request listener: `/api/` goes to the API pipeline (JSON, tokens, logged), `/healthz`
 * answers directly, `/static/` serves the stylesheet and script, everything else is a web
 * page. It never listens itself; main does.
 */
export function createApp(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const api = new Router<ApiRoute>(apiV1Routes);
  const web = new Router<WebRoute>(webRoutes);
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    if (path === '/healthz') return respond(res, json({ ok: true }), { 'cache-control': 'no-store' });
    const asset = path.startsWith('/static/') ? staticAsset(req, path, query) : null;
    if (asset !== null) return respond(res, asset);
    const ip = clientIp(req, deps.config.trustProxy);
    const done = path.startsWith('/api/') ? handleApi(deps, api, req, res, path, query, ip) : handleWeb(deps, web, req, res, path, query, ip);
    done.catch((err: unknown) => {
      // The pipelines answer every error themselves; reaching here means writing failed.
      deps.logError(err);
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
}
