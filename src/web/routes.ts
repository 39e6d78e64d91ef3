import type { RouteDef } from '../http/router.ts';
import type { WebRoute } from './context.ts';
import { login, loginForm, logout, register, registerForm } from './pages/account.ts';
import { adminAudit } from './pages/admin-audit.ts';
import { adminLogs } from './pages/admin-logs.ts';
import { adminTokens, adminTokenUpdate } from './pages/admin-tokens.ts';
import { adminUsers, adminUsersAction } from './pages/admin-users.ts';
import { apiKeys, apiKeysAction } from './pages/api-keys.ts';
import { deleteForm, deletePaste, editForm, editPaste } from './pages/edit.ts';
import { pasteHistory } from './pages/history.ts';
import { pasteZip } from './pages/files-zip.ts';
import { createPaste, home } from './pages/home.ts';
import { keyDelete, keyDeleteForm } from './pages/key-delete.ts';
import { myPastes } from './pages/my.ts';
import { oidcCallback, oidcStart } from './pages/oidc.ts';
import { ACCOUNT_PATH, account, changePassword } from './pages/password.ts';
import { pasteFile, pasteQr, rawPaste, rawPasteUnlock, shortLink, unlockPaste, viewPaste } from './pages/paste.ts';

/**
 * The web route table. Every POST is a form whose CSRF token the pipeline checks first;
 * `access` sends anonymous visitors to the login page and non-admins to a 403.
 */
export const webRoutes: RouteDef<WebRoute>[] = [
  { method: 'GET', path: '/', data: { handler: home } },
  { method: 'POST', path: '/', data: { handler: createPaste, access: 'user', anonymous: true, files: true } },
  { method: 'GET', path: '/login', data: { handler: loginForm } },
  { method: 'POST', path: '/login', data: { handler: login } },
  { method: 'GET', path: '/register', data: { handler: registerForm } },
  { method: 'POST', path: '/register', data: { handler: register } },
  { method: 'POST', path: '/logout', data: { handler: logout, beforeNewPassword: true } },
  { method: 'GET', path: ACCOUNT_PATH, data: { handler: account, access: 'user', beforeNewPassword: true } },
  { method: 'POST', path: ACCOUNT_PATH, data: { handler: changePassword, access: 'user', beforeNewPassword: true } },
  { method: 'GET', path: '/my', data: { handler: myPastes, access: 'user' } },
  { method: 'GET', path: '/api_keys.php', data: { handler: apiKeys, access: 'user' } },
  { method: 'POST', path: '/api_keys.php', data: { handler: apiKeysAction, access: 'user' } },
  { method: 'GET', path: '/admin/tokens', data: { handler: adminTokens, access: 'admin' } },
  { method: 'POST', path: '/admin/tokens', data: { handler: adminTokenUpdate, access: 'admin' } },
  { method: 'GET', path: '/admin/logs', data: { handler: adminLogs, access: 'admin' } },
  { method: 'GET', path: '/admin/users', data: { handler: adminUsers, access: 'admin' } },
  { method: 'POST', path: '/admin/users', data: { handler: adminUsersAction, access: 'admin' } },
  { method: 'GET', path: '/admin/audit', data: { handler: adminAudit, access: 'admin' } },
  { method: 'GET', path: '/p/:hash', data: { handler: viewPaste } },
  { method: 'POST', path: '/p/:hash', data: { handler: unlockPaste } },
  { method: 'GET', path: '/p/:hash/raw', data: { handler: rawPaste } },
  { method: 'GET', path: '/p/:hash/qr.svg', data: { handler: pasteQr } },
  { method: 'GET', path: '/p/:hash/files/:name', data: { handler: pasteFile } },
  { method: 'GET', path: '/p/:hash/files.zip', data: { handler: pasteZip } },
  { method: 'GET', path: '/p/:hash/history', data: { handler: pasteHistory } },
  { method: 'POST', path: '/p/:hash/raw', data: { handler: rawPasteUnlock } },
  { method: 'GET', path: '/p/:hash/edit', data: { handler: editForm, access: 'user' } },
  { method: 'POST', path: '/p/:hash/edit', data: { handler: editPaste, access: 'user', files: true } },
  { method: 'GET', path: '/p/:hash/delete', data: { handler: deleteForm, access: 'user' } },
  { method: 'POST', path: '/p/:hash/delete', data: { handler: deletePaste, access: 'user' } },
  { method: 'GET', path: '/p/:hash/delete/:key', data: { handler: keyDeleteForm } },
  { method: 'POST', path: '/p/:hash/delete/:key', data: { handler: keyDelete } },
  { method: 'GET', path: '/s/:code', data: { handler: shortLink } },
];

/** Served only with OIDC_ISSUER (README, Sign-in with OpenID Connect): without it they are 404. */
export const oidcRoutes: RouteDef<WebRoute>[] = [
  { method: 'GET', path: '/login/oidc', data: { handler: oidcStart } },
  { method: 'GET', path: '/login/oidc/callback', data: { handler: oidcCallback } },
];
