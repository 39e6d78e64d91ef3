import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * For a request sent with `Expect: 100-continue`: the client waits for `100 Continue` before
 * it sends the body. Node would send it before any check ran, inviting a body we are about
 * to refuse (413, 401). Instead the invitation goes out when something starts reading the
 * body (a stream starts flowing with 'resume'), and never once the answer has begun: a
 * request refused without reading gets its final status alone (RFC 9110 §10.1.1).
 */
export function inviteWhenRead(req: IncomingMessage, res: ServerResponse): void {
  req.once('resume', () => {
    if (!res.headersSent && !res.writableEnded) res.writeContinue();
  });
}
