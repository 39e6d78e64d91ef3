import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/api/v1/openapi.ts';

/**
 * Every API answer a test receives through `req` (test/helpers/server.ts) is checked here
 * against the OpenAPI document the server serves: its status must be documented for the
 * operation, its required headers present and well-formed, and its body valid against the
 * schema of its media type. So the document cannot drift from the code.
 */

type Json = Record<string, unknown>;

const DOC_ID = 'openapi.json';
const doc = openApiDocument('http://localhost:8080') as Json & { paths: Record<string, Record<string, Json>> };
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
// The whole document is one schema resource, so `#/components/...` refs resolve inside it.
ajv.addSchema({ ...doc, $id: DOC_ID });
const compiled = new Map<string, ValidateFunction>();

const pointer = (...parts: string[]): string =>
  `${DOC_ID}#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

function validator(ref: string): ValidateFunction {
  let v = compiled.get(ref);
  if (v === undefined) {
    v = ajv.compile({ $ref: ref });
    compiled.set(ref, v);
  }
  return v;
}

/** The object a `$ref` ('#/components/...') names in the document, or `o` itself. */
function deref(o: Json): { value: Json; at: string[] | null } {
  const r = o['$ref'];
  if (typeof r !== 'string') return { value: o, at: null };
  const at = r.slice(2).split('/');
  let value: unknown = doc;
  for (const p of at) value = (value as Json)[p];
  return { value: value as Json, at };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The document's path a request path is an instance of: itself, or a `{param}` template it fits. */
function templateOf(path: string): string {
  if (doc.paths[path] !== undefined) return path;
  const segments = path.split('/');
  for (const template of Object.keys(doc.paths)) {
    const parts = template.split('/');
    if (parts.length === segments.length && parts.every((p, i) => /^\{\w+\}$/.test(p) || p === segments[i]))
      return template;
  }
  return path;
}

/** Throws an AssertionError saying how `answer` to `method path` departs from the document. */
export function checkApiAnswer(method: string, pathAndQuery: string, answer: Answer): void {
  const sent = pathAndQuery.split('?')[0] ?? '';
  const path = templateOf(sent);
  const where = `${method} ${sent} → ${answer.status}`;
  const item = doc.paths[path];
  const op = item?.[method === 'HEAD' ? 'get' : method.toLowerCase()];
  let responseAt: string[];
  if (item === undefined) {
    assert.equal(answer.status, 404, `${where}: an unknown endpoint must answer 404`);
    responseAt = ['components', 'responses', 'E404'];
  } else if (op === undefined) {
    assert.equal(answer.status, 405, `${where}: a method the document does not list must answer 405`);
    responseAt = ['components', 'responses', 'E405'];
  } else {
    const listed = (op['responses'] as Json)[String(answer.status)] as Json | undefined;
    assert.ok(listed !== undefined, `${where}: status ${answer.status} is not documented for this operation`);
    const { at } = deref(listed);
    responseAt = at ?? [
      'paths',
      path,
      method === 'HEAD' ? 'get' : method.toLowerCase(),
      'responses',
      String(answer.status),
    ];
  }
  let response: unknown = doc;
  for (const p of responseAt) response = (response as Json)[p];
  const { headers = {}, content } = response as { headers?: Record<string, Json>; content?: Record<string, unknown> };

  for (const [name, declared] of Object.entries(headers)) {
    const { value: header } = deref(declared);
    const got = answer.headers[name.toLowerCase()];
    if (got === undefined) {
      assert.ok(header['required'] !== true, `${where}: header ${name} is required`);
      continue;
    }
    const check = validator(pointer(...(deref(declared).at ?? [...responseAt, 'headers', name]), 'schema'));
    assert.ok(check(got), `${where}: header ${name}: ${JSON.stringify(got)} ${ajv.errorsText(check.errors)}`);
  }

  if (method === 'HEAD' || content === undefined) return;
  const type = String(answer.headers['content-type'] ?? '');
  const media = Object.keys(content).find((m) => m.split(';')[0] === type.split(';')[0]);
  assert.ok(
    media !== undefined,
    `${where}: Content-Type ${type} is not documented (${Object.keys(content).join(', ')})`,
  );
  if (!media.startsWith('application/json')) return;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    assert.fail(`${where}: the body is not JSON: ${answer.text.slice(0, 200)}`);
  }
  const check = validator(pointer(...responseAt, 'content', media, 'schema'));
  assert.ok(check(body), `${where}: ${ajv.errorsText(check.errors)} in ${answer.text.slice(0, 300)}`);
}
