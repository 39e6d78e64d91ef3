import { answers as hasteAnswers } from '../haste-openapi.ts';

type Schema = Record<string, unknown>;

/**
 * Every path's OPTIONS: a browser's preflight, answered 204 when CORS_ORIGINS is set (with
 * the CORS headers when its Origin is listed), and 405 like any unknown method otherwise.
 */
export function withPreflight(paths: Record<string, Record<string, Schema>>): Record<string, Record<string, Schema>> {
  const preflight: Schema = {
    summary: 'CORS preflight (README, CORS)',
    security: [],
    parameters: [
      { name: 'Origin', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'Access-Control-Request-Method', in: 'header', required: true, schema: { type: 'string' } },
    ],
    responses: {
      204: {
        description:
          'With CORS_ORIGINS set. For a listed origin: `Access-Control-Allow-Origin`, `-Allow-Methods`, ' +
          '`-Allow-Headers`, `-Max-Age`; for any other, none of them. Never `-Allow-Credentials`.',
        headers: {
          'Access-Control-Allow-Origin': { schema: { type: 'string' } },
          'Access-Control-Allow-Methods': { schema: { type: 'string' } },
          'Access-Control-Allow-Headers': { schema: { type: 'string' } },
          'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
        },
      },
      405: { $ref: '#/components/responses/E405' },
    },
  };
  // hastebin's paths refuse in hastebin's shape.
  const haste = { ...preflight, responses: { ...(preflight['responses'] as Schema), ...hasteAnswers(405) } };
  const out: Record<string, Record<string, Schema>> = {};
  for (const [path, item] of Object.entries(paths))
    out[path] = { ...item, options: path.startsWith('/api/') ? preflight : haste };
  return out;
}
