import { json, type Reply } from '../../http/reply.ts';
import type { ApiDeps } from '../request.ts';
import { openApiDocument } from './openapi.ts';

/**
 * GET /api/v1/openapi.json (README, API): the OpenAPI 3.1 document, no token needed. Built
 * per request (a fraction of a millisecond), so nothing is kept for an endpoint read rarely.
 */
export const openApiReply = (deps: ApiDeps): Reply => json(openApiDocument(deps.baseUrl));
