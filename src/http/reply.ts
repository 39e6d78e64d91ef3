import type { Readable } from 'node:stream';
/** What a handler returns; only `respond` turns it into bytes on the socket. */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Headers }
  /** `secretLength`: a HEAD answer leaves out Content-Length (a one-time paste's size is its owner's secret). */
  | { kind: 'text'; status: number; body: string; headers?: Headers; secretLength?: true }
  | { kind: 'html'; status: number; body: string; headers?: Headers }
  | { kind: 'redirect'; status: 301 | 302 | 303; location: string; headers?: Headers }
  /**
   * Any other body (API answers built from pieces, stylesheets, scripts, images), carrying
   * its own Content-Type. Given as pieces, it goes out in one write without first being
   * copied into one buffer. `length`, when the handler knows it: the body's size in bytes
   * (respond measures the pieces otherwise).
   */
  | {
      kind: 'bytes';
      status: number;
      contentType: string;
      body: Buffer | readonly (Buffer | string)[];
      headers?: Headers;
      secretLength?: true;
      length?: number;
    }
  /** A body read as it is sent (a paste's file), `length` bytes, never held whole. */
  | {
      kind: 'stream';
      status: number;
      contentType: string;
      length: number;
      open: () => Readable;
      headers?: Headers;
    };

export type Headers = Record<string, string | string[]>;

export const json = (body: unknown, status = 200, headers?: Headers): Reply =>
  headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body };
export const text = (body: string, status = 200): Reply => ({ kind: 'text', status, body });
export const html = (body: string, status = 200, headers?: Headers): Reply =>
  headers ? { kind: 'html', status, body, headers } : { kind: 'html', status, body };
export const redirect = (location: string, status: 301 | 302 | 303 = 302): Reply => ({
  kind: 'redirect',
  status,
  location,
});
