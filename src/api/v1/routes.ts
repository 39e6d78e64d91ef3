import type { RouteDef } from '../../http/router.ts';
import type { ApiRoute } from '../request.ts';
import { languagesReply } from './languages.ts';
import { openApiReply } from './openapi-reply.ts';
import { getFile } from './file.ts';
import { getPaste, rawPaste } from './read.ts';
import { createPaste, deletePaste, editPaste } from './write.ts';

/** The API v1 route table (README, API): method, path, required scope, handler. */
export const apiV1Routes: RouteDef<ApiRoute>[] = [
  { method: 'GET', path: '/api/v1/paste.php', data: { scope: 'read', handler: getPaste } },
  { method: 'GET', path: '/api/v1/raw.php', data: { scope: 'read', handler: rawPaste } },
  {
    method: 'POST',
    path: '/api/v1/paste_create.php',
    data: { scope: 'write', text: true, files: true, anonymous: 'create', handler: createPaste },
  },
  { method: 'POST', path: '/api/v1/paste_edit.php', data: { scope: 'write', files: true, handler: editPaste } },
  { method: 'GET', path: '/api/v1/file.php', data: { scope: 'read', anonymous: 'grant', handler: getFile } },
  { method: 'POST', path: '/api/v1/paste_delete.php', data: { scope: 'write', handler: deletePaste } },
  { method: 'GET', path: '/api/v1/openapi.json', data: { scope: null, answer: openApiReply } },
  { method: 'GET', path: '/api/v1/languages.php', data: { scope: null, answer: languagesReply } },
];
