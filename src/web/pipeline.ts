import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { html as reply, type Reply } from '../http/reply.ts';
import { respond } from '../http/respond.ts';
import type { Router } from '../http/router.ts';
import { html } from './html.ts';
import { page, SECURITY_HEADERS } from './layout.ts';
import type { WebContext } from './pages.ts';

export type WebHandler = (ctx: WebContext) => Promise<Reply>;

const TITLES: Record<number, string> = {
  401: 'Password required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  410: 'Gone',
  413: 'Too large',
  429: 'Too many requests',
  500: 'Something went wrong',
};

/** A web page request: like the API's pipeline, but errors render as escaped HTML pages. */
export async function handleWeb(deps: AppDeps, router: Router<WebHandler>, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  let result: Reply;
  try {
    const match = router.match(req.method ?? 'GET', path);
    if (match.kind === 'not_found') throw new HttpError('not_found', 'There is nothing at this address.');
    if (match.kind === 'method_not_allowed') {
      throw new HttpError('method_not_allowed', 'That method is not allowed here.', { headers: { allow: match.allow.join(', ') } });
    }
    result = await match.data({ deps, params: match.params });
  } catch (err) {
    let e: HttpError;
    if (err instanceof HttpError) e = err;
    else {
      deps.logError(err);
      e = new HttpError('internal', 'The server hit an unexpected error.');
    }
    // Every "not there" looks the same, so a private paste cannot be told from a missing one.
    const message = e.status === 404 ? 'There is no paste here (it may never have existed, or it is private).' : e.message;
    const title = TITLES[e.status] ?? 'Error';
    result = reply(page(title, html`<h1>${title}</h1><p>${message}</p>`), e.status, e.extra.headers);
  }
  respond(res, result, result.kind === 'html' ? { ...SECURITY_HEADERS } : undefined);
}
