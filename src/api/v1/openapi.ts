import { HASTE_ERROR, hastePaths } from '../haste-openapi.ts';
import { withPreflight } from './openapi-preflight.ts';
import { STATUS_BY_CODE, type ErrorCode } from '../../http/errors.ts';
import { EXPIRY_MS } from '../../paste/expiry.ts';
import { ENVELOPE_ALG, ENVELOPE_KDF, ENVELOPE_VERSION } from '../../paste/envelope.ts';
import { KNOWN_LANGUAGES, LANGUAGE_ALIASES } from '../../paste/language.ts';
import { PRIVACIES } from '../../paste/paste.ts';
import { FILE_LIMIT_DEFAULTS, MAX_FILE_NAME_BYTES } from '../../paste/files.ts';

const MAX_FILES_DEFAULT = FILE_LIMIT_DEFAULTS.maxFilesPerPaste;
import { PASSWORD_MAX_CHARS, TITLE_MAX_CHARS, unknownLanguageWarning } from '../../paste/validate.ts';

/**
 * The API as an OpenAPI 3.1 document (README, API), served at /api/v1/openapi.json. Its
 * lists (languages, expiries, privacies, error codes, limits) come from the same constants
 * the code checks against, and the test suite checks every API answer it receives against
 * it, so the document cannot drift from the server.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const response = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });

/** The error codes a status is answered with (a 499 is only ever logged, never sent). */
const codesOf = (status: number): ErrorCode[] =>
  (Object.keys(STATUS_BY_CODE) as ErrorCode[]).filter((c) => STATUS_BY_CODE[c] === status);

/** Every status an API answer can have, with what it means (README, API). */
const ERRORS: Record<number, string> = {
  400: 'Malformed body or query, a bad or missing field, or a `hash` that is not 10 letters or digits.',
  401:
    'No token, an unknown or revoked token (`unauthorized`); or a protected paste read without its ' +
    'password (`password_required`).',
  403:
    "The token lacks the scope, the token is not the owner's, or the paste password is wrong " +
    "(`invalid_password`); a create without a token from another site's page: an `Origin` that is neither " +
    "BASE_URL's nor one CORS_ORIGINS lists, or `Sec-Fetch-Site: cross-site` (`cross_site`).",
  404: 'No such paste, or a private paste that is not yours (the two look identical).',
  405: 'Wrong method for this endpoint; the `Allow` header lists the right ones.',
  410: 'The paste expired (the error says `expired`) or was burned after reading (`burned`).',
  412: 'The paste has changed since the revision named in `If-Match`; nothing was written.',
  413:
    'The body is larger than MAX_PASTE_BYTES × 3 + 64 KiB (refused unread), or the content is over ' +
    "MAX_PASTE_BYTES; a file over MAX_FILE_BYTES, or a user's files over USER_QUOTA_BYTES (`quota_exceeded`).",
  415:
    'A POST body that is neither `application/json` nor `application/x-www-form-urlencoded` (nor ' +
    '`text/plain` for create, nor `multipart/form-data` for create and edit), or a charset other than UTF-8.',
  422: 'The `Idempotency-Key` was used by this token for a different request in the last 24 hours.',
  429:
    "The token's rate limit (`limit_per_minute` in the body), too many failed authentications from this " +
    'IP, or too many wrong passwords for this paste.',
  500: "An unexpected fault; the detail is only in the server's own log.",
  503:
    'The server cannot take the request now: the bytes it holds for bodies of not-yet-authenticated ' +
    'requests are spent (retry after `Retry-After` seconds, or send the token in the header), or its data ' +
    'folder cannot be written to (nothing was changed), or more password checks are waiting than it queues ' +
    '(retry after `Retry-After` seconds), or its database did not answer in time (`storage_unavailable`: ' +
    'nothing was changed; retry after `Retry-After` seconds), or lost its connection while a change was on its ' +
    'way (`outcome_unknown`: retry with the same `Idempotency-Key` to learn whether it was made).',
  507:
    "The server's disk is full: the write was refused and nothing was changed. Writes work again once " +
    'there is space.',
};

const flag = (description: string, dflt: 0 | 1): Schema => ({
  description: `${description} \`0\`/\`1\`, \`"0"\`/\`"1"\` and \`false\`/\`true\` are accepted.`,
  enum: [0, 1, '0', '1', false, true],
  default: dflt,
});

const tokenField: Schema = {
  type: 'string',
  description:
    'The API token, the third way to send it: used only when neither the Authorization header nor the ' +
    '`token` query parameter carries one.',
};

const pasteFields = (edit: boolean): Record<string, Schema> => ({
  title: {
    type: 'string',
    maxLength: TITLE_MAX_CHARS,
    description:
      `At most ${TITLE_MAX_CHARS} characters, one line (no control characters, U+0085, U+2028 ` +
      `or U+2029).${edit ? ' An empty title clears it.' : ''}`,
  },
  content: {
    type: 'string',
    ...(edit ? {} : { minLength: 1 }),
    description:
      'The text, at most MAX_PASTE_BYTES bytes of UTF-8 (1 MiB by default); never empty. Valid Unicode ' +
      'only: half of a surrogate pair is refused.',
  },
  language: {
    type: 'string',
    default: edit ? undefined : 'auto',
    examples: ['auto', ...KNOWN_LANGUAGES, ...LANGUAGE_ALIASES],
    description:
      '`auto` detects the language from the content. Any name or alias `languages.php` lists, matched ' +
      'case-insensitively; an alias (`js`, `c++`, `sh`, `yml`...) is stored as the language it stands for. ' +
      'Another name is stored as `text`, and the answer carries a `warning`.',
  },
  privacy: { enum: [...PRIVACIES], ...(edit ? {} : { default: 'public' }) },
  expiry: {
    enum: [...(edit ? ['keep'] : []), ...Object.keys(EXPIRY_MS)],
    default: edit ? 'keep' : 'never',
    description: `\`1w\` is 7 days, \`1m\` 30 days.${edit ? ' Counts from the edit; `keep` leaves it.' : ''}`,
  },
  password: {
    type: 'string',
    maxLength: PASSWORD_MAX_CHARS,
    description: edit ? 'Sets a new password (not with `clear_password=1`).' : 'Readers must then send it.',
  },
});

const stripUndefined = (o: Record<string, Schema>): Record<string, Schema> =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined))]),
  );

const ENCRYPTED_FIELD =
  `\`1\`: \`content\` is an envelope the client encrypted (AES-256-GCM), a JSON ` +
  `object \`{"v":${ENVELOPE_VERSION},"alg":"${ENVELOPE_ALG}","iv","ct"}\` with ` +
  `\`"kdf":"${ENVELOPE_KDF}","iter","salt"\` when a password was used, bytes in base64url ` +
  `(docs/encrypted-pastes.md). The server checks its shape only (400 otherwise), keeps it as it is, and ` +
  `neither detects its language nor searches it. Its files are kept as \`application/octet-stream\` whatever ` +
  `their parts claim: a client sends each as an envelope of its own under an opaque name.`;

/** A paste's file as `paste.php` lists it (README, Files). */
const pasteFile: Schema = {
  type: 'object',
  required: ['name', 'size', 'type', 'sha256'],
  properties: {
    name: {
      type: 'string',
      description:
        `As given: any UTF-8 but \`/\` and control characters, at most ${MAX_FILE_NAME_BYTES} ` +
        `bytes; unique within the paste.`,
    },
    size: { type: 'integer', minimum: 0, description: 'In bytes.' },
    type: {
      type: 'string',
      description: 'The Content-Type its uploader gave (not trusted: file.php decides how to serve it).',
    },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The SHA-256 of its bytes, in hex.' },
    url: {
      type: 'string',
      format: 'uri',
      description:
        'Only in the answer that burns a one-time paste: file.php with a grant that fetches this file ' +
        'once, within 10 minutes.',
    },
  },
};

const FILES_TEXT =
  'A `multipart/form-data` body takes the same fields as text parts plus up to MAX_FILES_PER_PASTE (10) ' +
  'parts named `file`, each with a filename and at most MAX_FILE_BYTES (10 MiB; 413 as soon as one is past ' +
  'it, or before a byte is read when Content-Length is past them all). After an `encrypted=1` part, a file ' +
  'part may be the envelope of a MAX_FILE_BYTES file, up to the largest such envelope ' +
  '(docs/encrypted-pastes.md, Limits); a paste that is not encrypted keeps MAX_FILE_BYTES. With at least one ' +
  'file, `content` may be absent or empty. A file name is any UTF-8 but `/` and control characters, at most ' +
  "255 bytes, and two files of one paste never share one (400). All the files of a user's pastes together " +
  'stay within USER_QUOTA_BYTES (413 `quota_exceeded`). A multipart request sends its token in the ' +
  'Authorization header or the query, not as a part. A create without a token (ANONYMOUS_PASTES) takes files ' +
  'only with ANONYMOUS_FILES=1; otherwise it is 403.';

/** The fields of a multipart create or edit, as text parts, with its `file` parts. */
const multipartOf = (schema: string, edit: boolean): Schema => ({
  allOf: [
    ref(schema),
    {
      properties: {
        file: {
          type: 'array',
          items: { type: 'string', contentMediaType: 'application/octet-stream' },
          maxItems: MAX_FILES_DEFAULT,
          description: 'One part per file, each with its filename.',
        },
        ...(edit
          ? {
              remove_file: {
                type: 'array',
                items: { type: 'string' },
                description: 'The name of a file to remove; repeat the part for more (400 for a name the paste lacks).',
              },
            }
          : {}),
      },
    },
  ],
});

const createRequest: Schema = {
  type: 'object',
  required: ['content'],
  properties: stripUndefined({
    ...pasteFields(false),
    highlight: flag('Highlight the code on its page.', 1),
    burn_after_read: flag('Deliver the paste to exactly one reader, then wipe it.', 0),
    encrypted: flag(ENCRYPTED_FIELD, 0),
    token: tokenField,
  }),
};

const hashProperty: Schema = { type: 'string', pattern: '^[A-Za-z0-9]{10}$', description: "The paste's " + 'hash.' };

const editRequest: Schema = {
  type: 'object',
  required: ['hash'],
  description: 'Omitted fields keep their value.',
  properties: stripUndefined({
    hash: hashProperty,
    ...pasteFields(true),
    clear_password: flag('Remove the password.', 0),
    encrypted: {
      ...flag(
        `${ENCRYPTED_FIELD} On edit, changing it needs the new \`content\` (400 otherwise); omitted, the ` +
          `paste stays as it is, and new content of an encrypted paste must be an envelope.`,
        0,
      ),
      default: undefined,
    },
    token: tokenField,
  }),
};

const deleteRequest: Schema = {
  type: 'object',
  required: ['hash'],
  properties: { hash: hashProperty, token: tokenField },
};

/** A request body in both accepted encodings (a form sends every value as a string, which the rules accept). */
const body = (schema: string, example: Record<string, unknown>): Schema => ({
  required: true,
  content: {
    'application/json': { schema: ref(schema), example },
    'application/x-www-form-urlencoded': { schema: ref(schema) },
  },
});

const rateHeaders: Schema = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
};

/** The error answers an operation can give, by status. */
const errors = (...statuses: number[]): Record<string, Schema> =>
  Object.fromEntries(statuses.map((s) => [String(s), response(`E${s}`)]));

const AUTHED = [401, 403, 405, 429, 500];

const writeResult: Schema = {
  type: 'object',
  required: ['ok', 'hash', 'url', 'short_url'],
  properties: {
    ok: { const: true },
    hash: hashProperty,
    url: { type: 'string', format: 'uri', description: "The paste's web page." },
    short_url: {
      type: 'string',
      format: 'uri',
      description: "The short link (`/s/` and the hash's first six characters).",
    },
    delete_url: {
      type: 'string',
      format: 'uri',
      description:
        'Only for a paste made without a token (ANONYMOUS_PASTES): the page that deletes it. Its key is ' +
        'shown this once and kept only as a digest.',
    },
    warning: {
      type: 'string',
      description: 'Present when a `language` no grammar knows was asked for: the paste was stored as `text`.',
      examples: [unknownLanguageWarning('vue')],
    },
  },
};

const languagesResult: Schema = {
  type: 'object',
  required: ['ok', 'languages'],
  properties: {
    ok: { const: true },
    languages: {
      type: 'array',
      minItems: KNOWN_LANGUAGES.length,
      items: {
        type: 'object',
        required: ['name', 'label', 'aliases'],
        properties: {
          name: { enum: [...KNOWN_LANGUAGES] },
          label: { type: 'string' },
          aliases: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
};

const time = (description: string): Schema => ({
  type: 'string',
  pattern: '^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$',
  description: `${description} UTC, \`YYYY-MM-DD HH:MM:SS\`.`,
});

const paste: Schema = {
  type: 'object',
  required: [
    'view_count',
    'hash',
    'title',
    'language',
    'privacy',
    'burn_after_read',
    'short_url',
    'created_at',
    'expire_at',
    'revision',
    'owner',
    'content',
    'files',
  ],
  properties: {
    view_count: { type: 'integer', minimum: 0, description: 'Includes the read that returned it.' },
    hash: hashProperty,
    title: { type: 'string' },
    language: {
      enum: [...KNOWN_LANGUAGES, 'auto'],
      description: '`auto` only on an encrypted paste whose language its readers detect.',
    },
    privacy: { enum: [...PRIVACIES] },
    burn_after_read: { enum: [0, 1] },
    encrypted: {
      enum: [0, 1],
      description:
        'Present (`1`) only on an encrypted paste: `content` is the envelope the client encrypted, as it ' +
        'was sent (docs/encrypted-pastes.md).',
    },
    short_url: { type: 'string', format: 'uri' },
    created_at: time('When it was created,'),
    expire_at: { oneOf: [time('When it expires,'), { type: 'null' }] },
    revision: {
      type: 'integer',
      minimum: 1,
      description: "This version's number: 1 when created, one more with each edit.",
    },
    owner: {
      type: 'object',
      required: ['id', 'display_name'],
      properties: { id: { type: 'integer' }, display_name: { type: 'string' } },
    },
    content: { type: 'string' },
    files: {
      type: 'array',
      items: ref('PasteFile'),
      description: "The paste's files, in the order given (`[]` when none).",
    },
  },
};

/** The fields of a create whose body is plain text (the content), from the query string. */
const textQueryParams: Schema[] = Object.entries(createRequest['properties'] as Record<string, Schema>)
  .filter(([name]) => name !== 'content' && name !== 'token')
  .map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
    description: 'Only with a `text/plain` body, whose other fields come from here.',
  }));

const idempotencyKey: Schema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  description:
    'Makes a retry safe: for 24 hours the same key from the same token answers the first answer (same ' +
    'hash, status and body) instead of writing again; the same key for a different request is 422. Concurrent ' +
    'duplicates share one execution. Kept across restarts.',
};

const ifMatch: Schema = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'The `ETag` of the revision this write is meant for: when the paste has changed since, the answer is ' +
    '412 and nothing is written.',
};

/** A read's answers when the reader holds the current revision. */
const notModified: Schema = {
  description: 'The reader holds the current revision (`If-None-Match`): no body, no view counted, nothing burned.',
  headers: {
    ETag: { $ref: '#/components/headers/ETag' },
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  },
};

const hashParam: Schema = { name: 'hash', in: 'query', required: true, schema: hashProperty };
const readParams: Schema[] = [
  hashParam,
  {
    name: 'revision',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1 },
    description:
      'An earlier version of the paste, for whoever may read the paste now; nothing is counted or burned. ' +
      '404 when there is no such revision.',
  },
  {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description:
      "The paste's `ETag` (or a list of them): when it names the current revision the answer is 304 with " +
      'no body, after every other check, and no view is counted and nothing is burned.',
  },
  {
    name: 'password',
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description: "The paste's password, when it has one (or send `X-Paste-Password`).",
  },
  {
    name: 'X-Paste-Password',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: "The paste's password as UTF-8, instead of the query parameter.",
  },
];

/** The document, for a server whose public address is `baseUrl`. */
export function openApiDocument(baseUrl: string): Record<string, unknown> {
  const errorResponses = Object.fromEntries(
    Object.entries(ERRORS).map(([status, description]) => {
      const codes = codesOf(Number(status));
      const schema: Schema = {
        allOf: [ref('Error'), { properties: { code: { enum: codes } } }],
      };
      const headers: Schema = {
        'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
        'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
      };
      if (status === '429') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
      if (status === '503')
        headers['Retry-After'] = {
          required: false,
          schema: { type: 'string', pattern: '^\\d+$' },
          description: 'Whole seconds to wait, when waiting helps.',
        };
      if (status === '405')
        headers['Allow'] = {
          required: true,
          schema: { type: 'string' },
          description: 'The methods this endpoint takes.',
        };
      if (status === '429')
        schema['allOf'] = [
          ref('Error'),
          {
            properties: {
              code: { enum: codes },
              limit_per_minute: {
                type: 'integer',
                description: "The token's limit, when the token's own bucket is empty.",
              },
            },
          },
        ];
      if (status === '410') {
        schema['allOf'] = [ref('Error'), { properties: { code: { enum: codes }, receipt: ref('Receipt') } }];
      }
      return [
        `E${status}`,
        {
          description,
          headers,
          content: {
            'application/json': {
              schema,
              example: { ok: false, error: description.split(/[.;(]/)[0], code: codes[0] },
            },
          },
        },
      ];
    }),
  );

  return {
    openapi: '3.1.0',
    info: {
      title: 'Paste API',
      version: '1',
      description:
        'The JSON API of a self-hosted paste service. Every answer carries `X-Request-Id`. Every endpoint ' +
        'but this document needs an API token, sent (in this order of preference) as `Authorization: Bearer ' +
        '<token>`, as the query parameter `token`, or as the body field `token` (an empty one is none); but for a ' +
        "create when the server allows anonymous pastes (ANONYMOUS_PASTES), and hastebin's reads, which without a " +
        "token see what the paste's web page shows. hastebin's endpoints (`/documents`, `/raw/{key}`) answer " +
        "hastebin's shapes. With CORS_ORIGINS set, a browser's preflight (`OPTIONS`) is answered 204, and answers " +
        'to a listed origin carry `Access-Control-Allow-Origin`. When several errors apply, the first of 404, 405, ' +
        '401/429 (authentication), 403 (a create without a token from another site), 429 (rate limit), 403 ' +
        "(scope), 415/413/400 (body), then the endpoint's own checks wins. Every answer carries `Cache-Control: " +
        'no-store`.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }, { queryToken: [] }],
    paths: withPreflight({
      '/api/v1/paste_create.php': {
        post: {
          operationId: 'createPaste',
          summary: 'Create a paste (scope `write`)',
          description:
            `A \`text/plain\` body (UTF-8; another charset is 415) is the content, and the ` +
            `other fields come from the query string: \`cmd | curl -H "Content-Type: text/plain" --data-binary @- ` +
            `"…/paste_create.php?title=build.log&expiry=1d"\`. With \`Accept: text/plain\` the answer is the paste's ` +
            `URL and a newline.\n\n${FILES_TEXT}\n\nWhen the server runs with ANONYMOUS_PASTES=1, a request with no ` +
            `token at all is an anonymous create: its own rate limit per client IP (ANONYMOUS_RATE_PER_MINUTE, ` +
            `in the rate-limit headers), at most ANONYMOUS_MAX_BYTES of content (413), public or unlisted only ` +
            `(400), an expiry no longer than ANONYMOUS_MAX_EXPIRY (400; left out, it is that longest one), no ` +
            `Idempotency-Key; the answer adds \`delete_url\`. Otherwise a request without a token is 401.`,
          security: [{ bearer: [] }, { queryToken: [] }, {}],
          parameters: [idempotencyKey, ...textQueryParams],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('CreateRequest'),
                example: { title: 'hello', content: 'print(42)', language: 'python', expiry: '1d' },
              },
              'application/x-www-form-urlencoded': { schema: ref('CreateRequest') },
              'text/plain': { schema: { type: 'string', minLength: 1 }, example: 'build output\n' },
              'multipart/form-data': { schema: multipartOf('CreateRequest', false) },
            },
          },
          responses: {
            200: {
              description: 'Created: JSON, or the URL and a newline when the client asked for `text/plain`.',
              headers: rateHeaders,
              content: {
                'application/json': { schema: ref('WriteResult') },
                'text/plain; charset=utf-8': { schema: { type: 'string', pattern: '^https?://\\S+\\n$' } },
              },
            },
            ...errors(400, ...AUTHED, 413, 415, 422, 503, 507),
          },
        },
      },
      '/api/v1/paste.php': {
        get: {
          operationId: 'getPaste',
          summary: 'Get a paste (scope `read`); counts a view, and burns a burn-after-read paste',
          description:
            '`HEAD` runs the same checks but neither counts a view nor burns (nor, for a one-time paste, ' +
            'sends `Content-Length`).',
          parameters: readParams,
          responses: {
            200: {
              description: 'The paste.',
              headers: { ...rateHeaders, ETag: { $ref: '#/components/headers/ETag' } },
              content: { 'application/json': { schema: ref('PasteResult') } },
            },
            304: notModified,
            ...errors(400, ...AUTHED, 404, 410, 503),
          },
        },
      },
      '/api/v1/raw.php': {
        get: {
          operationId: 'getRaw',
          summary: 'The content alone, as text (scope `read`); counts a view like paste.php',
          parameters: readParams,
          responses: {
            200: {
              description: 'The content, byte for byte.',
              headers: {
                ...rateHeaders,
                ETag: { $ref: '#/components/headers/ETag' },
                'Content-Security-Policy': {
                  required: true,
                  schema: { const: 'sandbox' },
                  description: 'A browser that opens it runs nothing of it.',
                },
                Link: {
                  schema: { type: 'string' },
                  description:
                    'Only on the read that burns a one-time paste with files: one `<url>; ' +
                    'rel="enclosure"; title*=UTF-8\'\'NAME` per file, its url fetching it once within 10 minutes (as ' +
                    "paste.php's `files[].url`).",
                },
              },
              content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } },
            },
            304: notModified,
            ...errors(400, ...AUTHED, 404, 410, 503),
          },
        },
      },
      '/api/v1/file.php': {
        get: {
          operationId: 'getFile',
          summary: "One file of a paste (scope `read`), under the paste's read rules; counts no view",
          description:
            "The file's bytes, never as a page of this site: `X-Content-Type-Options: nosniff`, " +
            '`Content-Security-Policy: sandbox`. Only a PNG, JPEG, GIF or WebP image whose bytes are one is served ' +
            'inline with that type; everything else is `application/octet-stream` with `Content-Disposition: ' +
            "attachment` and its name (RFC 6266: `filename*` in UTF-8 and an ASCII `filename`). A one-time paste's " +
            'files are not served (403) but through the grants its one read hands out: with `grant`, the file of a ' +
            'burned paste is sent once, within 10 minutes of the burn, with `Cache-Control: no-store` (a HEAD spends ' +
            "nothing); a grant used, expired or another file's is 403. A file of a deleted, expired or burned " +
            'paste is 404 or 410 at once.',
          parameters: [
            hashParam,
            {
              name: 'name',
              in: 'query',
              required: true,
              schema: { type: 'string' },
              description: 'The ' + "file's name.",
            },
            {
              name: 'grant',
              in: 'query',
              schema: { type: 'string' },
              description:
                "A burned paste's file grant, from the `url` its burning read gave; with one no token is " +
                'needed (the grant is the key), without one a token is (401).',
            },
            readParams[1] as Schema,
            {
              name: 'If-None-Match',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description:
                "The file's `ETag` (its SHA-256, quoted): when it names the file's bytes the answer is 304 " +
                'with no body, after every other check.',
            },
            ...readParams.slice(3),
          ],
          responses: {
            200: {
              description: "The file's bytes.",
              headers: {
                ...rateHeaders,
                ETag: { required: true, schema: { type: 'string' }, description: "The file's SHA-256, " + 'quoted.' },
                'Content-Security-Policy': { required: true, schema: { const: 'sandbox' } },
                'X-Content-Type-Options': { required: true, schema: { const: 'nosniff' } },
                'Content-Disposition': {
                  required: true,
                  schema: {
                    type: 'string',
                    pattern: '^(inline|attachment); filename="[\\x20-\\x7e]*"; filename\\*=UTF-8\'\'\\S*$',
                  },
                },
              },
              content: {
                'application/octet-stream': {
                  schema: { type: 'string', contentMediaType: 'application/octet-stream' },
                },
                'image/png': { schema: { type: 'string' } },
                'image/jpeg': { schema: { type: 'string' } },
                'image/gif': { schema: { type: 'string' } },
                'image/webp': { schema: { type: 'string' } },
              },
            },
            304: {
              description: 'The reader holds these bytes already (`If-None-Match`): no body.',
              headers: {
                ETag: { required: true, schema: { type: 'string' }, description: "The file's SHA-256, " + 'quoted.' },
                'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
              },
            },
            ...errors(400, ...AUTHED, 404, 410, 503),
          },
        },
      },
      '/api/v1/paste_edit.php': {
        post: {
          operationId: 'editPaste',
          summary: 'Edit a paste (scope `write`; the owner or `admin`)',
          description:
            `${FILES_TEXT} An edit adds its \`file\` parts to the paste's files and removes ` +
            `those its \`remove_file\` parts name; the file list is part of the revision, as the content is ` +
            `(If-Match, ` +
            `ETag, revisions).`,
          parameters: [idempotencyKey, ifMatch],
          requestBody: {
            ...body('EditRequest', { hash: 'aB3dE5gH7j', content: 'print(43)' }),
            content: {
              ...(body('EditRequest', {})['content'] as Schema),
              'multipart/form-data': { schema: multipartOf('EditRequest', true) },
            },
          },
          responses: {
            200: {
              description:
                "Edited. `ETag` names the new revision (absent on a repeated Idempotency-Key's " + 'answer).',
              headers: {
                ...rateHeaders,
                ETag: {
                  required: false,
                  schema: { type: 'string' },
                  description: "The new revision's " + 'entity tag.',
                },
              },
              content: { 'application/json': { schema: ref('WriteResult') } },
            },
            ...errors(400, ...AUTHED, 404, 410, 412, 413, 415, 422, 503, 507),
          },
        },
      },
      '/api/v1/paste_delete.php': {
        post: {
          operationId: 'deletePaste',
          summary: 'Delete a paste in any state (scope `write`; the owner or `admin`)',
          parameters: [ifMatch],
          requestBody: body('DeleteRequest', { hash: 'aB3dE5gH7j' }),
          responses: {
            200: {
              description: 'Deleted, with its short link.',
              headers: rateHeaders,
              content: { 'application/json': { schema: ref('DeleteResult') } },
            },
            ...errors(400, ...AUTHED, 404, 412, 413, 415, 503, 507),
          },
        },
      },
      '/api/v1/languages.php': {
        get: {
          operationId: 'listLanguages',
          summary: 'Every language a paste may be tagged with (no token needed)',
          description:
            '`name` is what a paste stores and `paste.php` answers; `language` on create and edit also ' +
            'takes any of `aliases`, in any case.',
          security: [],
          responses: {
            200: {
              description: 'The languages, A to Z by name.',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
              content: { 'application/json': { schema: ref('LanguagesResult') } },
            },
            ...errors(405),
          },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'openApiDocument',
          summary: 'This document (no token needed)',
          security: [],
          responses: {
            200: {
              description: 'The OpenAPI 3.1 document.',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
              content: { 'application/json': { schema: { type: 'object', required: ['openapi'] } } },
            },
            ...errors(405),
          },
        },
      },
      ...hastePaths,
    }),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            '`Authorization: Bearer <token>`, the preferred way. Tokens come from the CLI or the My API ' +
            'Keys page.',
        },
        queryToken: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description:
            'The token as the `token` query parameter (it is never written to the log). A third way, the ' +
            'body field `token`, is described on the request bodies.',
        },
      },
      headers: {
        'X-RateLimit-Limit': {
          schema: { type: 'string', pattern: '^\\d+$' },
          description:
            "The token's requests per minute; `0` is unlimited. On every answer to an authenticated request.",
        },
        'X-RateLimit-Remaining': {
          schema: { type: 'string', pattern: '^\\d+$' },
          description: "Whole requests left in the token's bucket; absent when unlimited.",
        },
        'Retry-After': {
          required: true,
          schema: { type: 'string', pattern: '^\\d+$' },
          description: 'Whole seconds to wait.',
        },
        'Cache-Control': {
          required: true,
          schema: { const: 'no-store' },
          description: 'An answer to a token is never for a shared cache.',
        },
        ETag: {
          required: true,
          schema: { type: 'string', pattern: '^"[A-Za-z0-9]{10}\\.[0-9a-z]+"$' },
          description:
            "A strong validator of the paste's revision: it changes with every edit. Send it back in " +
            '`If-None-Match` (reads) or `If-Match` (edit, delete).',
        },
        'X-Request-Id': {
          required: true,
          schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
          description:
            "The request's id: the client's own `X-Request-Id` when it is 1-64 letters, digits or `._:-`, " +
            "else one made by the server. The API log line and the server's report of a fault name it.",
        },
      },
      schemas: {
        CreateRequest: createRequest,
        EditRequest: editRequest,
        DeleteRequest: deleteRequest,
        WriteResult: writeResult,
        LanguagesResult: languagesResult,
        DeleteResult: {
          type: 'object',
          required: ['ok', 'deleted'],
          properties: { ok: { const: true }, deleted: { const: true } },
        },
        PasteResult: {
          type: 'object',
          required: ['ok', 'paste'],
          properties: { ok: { const: true }, paste: ref('Paste') },
        },
        Paste: paste,
        PasteFile: pasteFile,
        HasteError: HASTE_ERROR,
        Receipt: {
          type: 'object',
          description:
            "A burned paste's receipt, in the 410 its owner (or an admin) gets: when it was read, and " +
            'through which side. Never the content.',
          required: ['read_at', 'via', 'token_id'],
          properties: {
            read_at: time('When it was read,'),
            via: { enum: ['api', 'web'] },
            token_id: {
              type: ['string', 'null'],
              description: 'The id of the API token that read it (never the secret); null on the web.',
            },
          },
        },
        Error: {
          type: 'object',
          required: ['ok', 'error', 'code'],
          properties: {
            ok: { const: false },
            error: { type: 'string', description: 'What went wrong, for people.' },
            code: {
              enum: (Object.keys(STATUS_BY_CODE) as ErrorCode[]).filter((c) => c !== 'client_closed'),
              description: 'What went wrong, for programs.',
            },
          },
        },
      },
      responses: errorResponses,
    },
  };
}
