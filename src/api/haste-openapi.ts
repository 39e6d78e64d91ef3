/**
 * hastebin's endpoints (api/haste.ts) in the OpenAPI document (api/v1/openapi.ts): their
 * answers are hastebin's shapes, and so are their errors, `{"message"}`.
 */

type Schema = Record<string, unknown>;

const WHY: Record<number, string> = {
  304: 'The reader holds the current revision (`If-None-Match`).',
  400: 'The text is empty, not UTF-8, or asks for what an anonymous paste may not have.',
  401: 'A bad token; without one, a create while ANONYMOUS_PASTES is off; a protected paste without its password.',
  403:
    "The token lacks the scope or may not make such a paste; the paste's password is wrong; a create without a " +
    "token from another site's page (an `Origin` neither BASE_URL's nor in CORS_ORIGINS, or `Sec-Fetch-Site: " +
    'cross-site`).',
  404: 'No such document (a private paste that is not yours looks the same).',
  405: 'Wrong method; `Allow` lists the right ones.',
  410: 'The paste expired or was burned after reading.',
  413: 'The text is over MAX_PASTE_BYTES (ANONYMOUS_MAX_BYTES without a token).',
  415: 'A multipart form: send the text itself as the body.',
  429:
    "The token's rate limit, the client's anonymous creates (ANONYMOUS_RATE_PER_MINUTE), or too many failed " +
    'authentications.',
  500: "An unexpected fault; the detail is only in the server's own log.",
  503: 'The server cannot take the request now.',
  507: "The server's disk is full; nothing was changed.",
};

const requestId = { $ref: '#/components/headers/X-Request-Id' };

/** hastebin's error answers for these statuses (a 304 has no body). */
export function answers(...statuses: number[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const status of statuses) {
    const headers: Schema = { 'X-Request-Id': requestId };
    if (status === 429) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    if (status === 405) headers['Allow'] = { required: true, schema: { type: 'string' } };
    out[String(status)] =
      status === 304
        ? { description: WHY[status], headers }
        : {
            description: WHY[status],
            headers,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/HasteError' } } },
          };
  }
  return out;
}

const keyParam: Schema = {
  name: 'key',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9]{10}(\\.[A-Za-z0-9]{1,16})?$' },
  description: "The paste's hash; an extension after a dot (`.js`), as hastebin's links have, is ignored.",
};

const READ_ERRORS = [401, 403, 404, 405, 410, 500, 503];
const readSecurity = [{ bearer: [] }, { queryToken: [] }, {}];

export const HASTE_ERROR: Schema = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string', description: 'What went wrong, for people.' } },
};

export const hastePaths: Record<string, Schema> = {
  '/documents': {
    post: {
      operationId: 'hasteCreate',
      summary: "hastebin's create: the body is the text",
      description:
        'For hastebin clients and ShareX. The whole body is the content, whatever its Content-Type (not a ' +
        'multipart form); other fields of a create may come in the query string. A bearer token makes it the ' +
        "token user's paste; without one it is an anonymous paste (ANONYMOUS_PASTES, with its limits), and 401 " +
        'when that is off. The answer adds `delete_url` for an anonymous paste.',
      security: [{ bearer: [] }, { queryToken: [] }, {}],
      requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string', minLength: 1 } } } },
      responses: {
        200: {
          description: 'Created.',
          headers: { 'X-Request-Id': requestId },
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['key'],
                additionalProperties: false,
                properties: {
                  key: { type: 'string', pattern: '^[A-Za-z0-9]{10}$' },
                  delete_url: { type: 'string', format: 'uri' },
                },
              },
            },
          },
        },
        ...answers(400, 401, 403, 405, 413, 415, 429, 500, 503, 507),
      },
    },
  },
  '/documents/{key}': {
    get: {
      operationId: 'hasteGet',
      summary: "hastebin's read: the key and the text",
      description:
        "Counts a view and burns a one-time paste, as paste.php. Without a token it reads what the paste's web " +
        'page shows anyone.',
      security: readSecurity,
      parameters: [keyParam],
      responses: {
        200: {
          description: 'The document.',
          headers: { 'X-Request-Id': requestId },
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['key', 'data'],
                additionalProperties: false,
                properties: { key: { type: 'string', pattern: '^[A-Za-z0-9]{10}$' }, data: { type: 'string' } },
              },
            },
          },
        },
        ...answers(304, ...READ_ERRORS),
      },
    },
  },
  '/raw/{key}': {
    get: {
      operationId: 'hasteRaw',
      summary: "hastebin's raw read: the text alone",
      security: readSecurity,
      parameters: [keyParam],
      responses: {
        200: {
          description: 'The text, byte for byte.',
          headers: { 'X-Request-Id': requestId },
          content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } },
        },
        ...answers(304, ...READ_ERRORS),
      },
    },
  },
};
