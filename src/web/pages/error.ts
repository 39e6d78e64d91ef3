import type { HttpError } from '../../http/errors.ts';
import { html as reply, type Reply } from '../../http/reply.ts';
import { html } from '../html.ts';
import { page, type Chrome } from '../layout.ts';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Password required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  410: 'Gone',
  413: 'Too large',
  415: 'Unsupported form',
  429: 'Too many requests',
  500: 'Something went wrong',
};

/** Every "not there" reads the same, so a private paste cannot be told from a missing one. */
export const NOT_FOUND_MESSAGE =
  'There is nothing here. A paste may never have existed at this address, may have been deleted, or may be private.';

/**
 * An error as an escaped HTML page with the error's status and headers; `message` may word
 * it for people. A fault's page shows the request's id for quoting in a report: the
 * operator finds it in the server's log.
 */
export function errorReply(c: Chrome, e: HttpError, message = e.message, requestId?: string): Reply {
  const title = TITLES[e.status] ?? 'Error';
  const body = html`<section class="card narrow center">
<p class="status-code">${e.status}</p>
<h1>${title}</h1>
<p class="muted">${message}</p>
<p><a class="btn" href="/">Back to the start page</a></p>
${
  requestId === undefined || e.status < 500 ? '' : html`<p class="muted small">Request id <code>${requestId}</code></p>`
}
</section>`;
  return reply(page(c, title, body), e.status, e.extra.headers);
}
