import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A create the service acknowledged (200), with what was sent and how many tries it took. */
export interface Acknowledged {
  key: string;
  hash: string;
  content: string;
  attempts: number;
}

export interface LoadResult {
  acknowledged: Acknowledged[];
  /** Creates that got no 200: the last answer (a status or an error code). */
  unacknowledged: { key: string; content: string; last: string }[];
  reads: number;
  /** Reads of an acknowledged paste that did not answer 200 with its content: why. */
  failedReads: string[];
  /** Every answer a client met and retried (a status or an error code), one entry a try. */
  retried: string[];
}

export interface LoadOptions {
  port: number;
  token: string;
  /** Clients at once, each with its own keep-alive connection, one request at a time. */
  clients: number;
  /** The load stops once this settles (requests in flight finish). */
  until: Promise<unknown>;
  /**
   * Retry a create as README "Safe retries" advises a client behind a proxy: the same
   * Idempotency-Key, after a connection error, 502, 503 or 504, up to 20 tries.
   */
  retryCreates: boolean;
  readsPerCreate?: number;
  /** Filled as the load goes (and answered at its end), for a caller that waits on its progress. */
  result?: LoadResult;
}

/** An empty result, to pass as `result` and watch. */
export const newLoadResult = (): LoadResult => ({
  acknowledged: [],
  unacknowledged: [],
  reads: 0,
  failedReads: [],
  retried: [],
});

/** Answers the README tells a client to retry with the same Idempotency-Key: the request's fate is unknown. */
const RETRYABLE = new Set(['502', '503', '504']);

/** Creates and reads of the pastes already acknowledged, through one address (the proxy), by several clients. */
export async function loadThroughProxy(opts: LoadOptions): Promise<LoadResult> {
  const result = opts.result ?? newLoadResult();
  let done = false;
  const stop = (): void => {
    done = true;
  };
  void opts.until.then(stop, stop);
  const client = async (c: number): Promise<void> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
      exchange(agent, opts.port, method, path, { authorization: `Bearer ${opts.token}`, ...headers }, body);
    try {
      for (let n = 0; !done; n++) {
        const key = randomUUID();
        const content = `client ${c} paste ${n} ${key}`;
        const body = JSON.stringify({ content });
        let last = '';
        let attempts = 0;
        for (;;) {
          attempts++;
          const headers = { 'content-type': 'application/json', 'idempotency-key': key };
          last = await send('POST', '/api/v1/paste_create.php', body, headers).then(
            (r) => (r.status === 200 ? `200 ${String((JSON.parse(r.text) as { hash: string }).hash)}` : `${r.status}`),
            (err: NodeJS.ErrnoException) => err.code ?? err.message,
          );
          if (last.startsWith('200 ')) break;
          const retryable = RETRYABLE.has(last) || !/^\d+$/.test(last);
          if (!opts.retryCreates || !retryable || attempts >= 20) break;
          result.retried.push(last);
          // The client's back-off between retries, as a polite client has one: not a wait for anything.
          await sleep(50 * attempts);
        }
        if (last.startsWith('200 ')) result.acknowledged.push({ key, hash: last.slice(4), content, attempts });
        else result.unacknowledged.push({ key, content, last });
        for (let r = 0; r < (opts.readsPerCreate ?? 3) && result.acknowledged.length > 0; r++) {
          const p = result.acknowledged[Math.floor(Math.random() * result.acknowledged.length)] as Acknowledged;
          result.reads++;
          const why = await send('GET', `/api/v1/raw.php?hash=${p.hash}`).then(
            (a) => (a.status === 200 && a.text === p.content ? null : `${a.status} ${a.text.slice(0, 200)}`),
            (err: NodeJS.ErrnoException) => err.code ?? err.message,
          );
          if (why !== null) result.failedReads.push(`${p.hash}: ${why}`);
        }
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, (_, c) => client(c)));
  return result;
}

/** One request on the client's agent; rejects on a connection error or after 15 s without an answer. */
export function exchange(
  agent: Agent | false,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.setTimeout(15_000, () => r.destroy(Object.assign(new Error('no answer within 15 s'), { code: 'TIMEOUT' })));
    r.end(body);
  });
}
