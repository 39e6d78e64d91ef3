import { HttpError } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { html as reply, type Reply } from '../../http/reply.ts';
import type { ApiLogEntry } from '../../log/entry.ts';
import { BadCursorError, type LogQuery } from '../../log/reader.ts';
import { formatTime } from '../../paste/paste.ts';
import { field, type WebContext } from '../context.ts';
import { options, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { adminTabs } from './admin-tokens.ts';

export const LOG_PAGE_SIZE = 50;
const FILTERS = ['token', 'user', 'endpoint', 'status', 'from', 'to'] as const;
const STATUS_CHOICES = [
  ['', 'Any status'],
  ['2', '2xx success'],
  ['3', '3xx redirect'],
  ['4', '4xx client error'],
  ['5', '5xx server error'],
] as const;
const ENDPOINTS = [
  '/api/v1/paste.php',
  '/api/v1/raw.php',
  '/api/v1/paste_create.php',
  '/api/v1/paste_edit.php',
  '/api/v1/paste_delete.php',
];

/** `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` as UTC epoch ms, or NaN. */
function utcInstant(s: string): number {
  if (!/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?$/.test(s)) return Number.NaN;
  return Date.parse(s.length === 10 ? `${s}T00:00:00Z` : `${s}Z`);
}

/** The reader's query from the filter form; unusable values are reported and left out. */
export function logQuery(ctx: WebContext, q: Fields): { query: LogQuery; problems: string[] } {
  const query: LogQuery = { limit: LOG_PAGE_SIZE };
  const problems: string[] = [];
  const token = field(q, 'token').trim().replace(/^pst_/, '').slice(0, 8);
  if (token !== '') {
    if (/^[A-Za-z0-9]{8}$/.test(token)) query.token_id = token;
    else problems.push('A token id is 8 letters and digits.');
  }
  const user = field(q, 'user').trim();
  if (user !== '') {
    const id = /^\d{1,9}$/.test(user) ? Number(user) : ctx.deps.accounts.userByName(user)?.id;
    if (id === undefined) problems.push('No user has that name.');
    else query.user_id = id;
  }
  const endpoint = field(q, 'endpoint').trim();
  if (endpoint !== '') query.endpoint = endpoint;
  const status = field(q, 'status');
  if (status === '2' || status === '3' || status === '4' || status === '5')
    query.statusClass = Number(status) as 2 | 3 | 4 | 5;
  for (const name of ['from', 'to'] as const) {
    const raw = field(q, name).trim();
    if (raw === '') continue;
    const t = utcInstant(raw);
    if (Number.isNaN(t)) problems.push(`"${name}" must be a date and time like 2026-01-31T14:30.`);
    else query[name] = t;
  }
  const cursor = field(q, 'cursor');
  if (cursor !== '') query.cursor = cursor;
  return { query, problems };
}

function filterLink(q: Fields, cursor: string | null): string {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const v = field(q, name);
    if (v !== '') params.set(name, v);
  }
  if (cursor !== null) params.set('cursor', cursor);
  const s = params.toString();
  return s === '' ? '/admin/logs' : `/admin/logs?${s}`;
}

function entryRow(ctx: WebContext, e: ApiLogEntry): SafeHtml {
  const user = e.user_id === null ? undefined : ctx.deps.accounts.user(e.user_id);
  return html`<tr>
<td data-label="Time (UTC)" class="mono">${formatTime(Date.parse(e.time))}</td>
<td data-label="Status"><span class="status status-${Math.floor(e.status / 100)}">${e.status}</span></td>
<td class="full" data-label="Request"><span class="mono">${e.method} ${e.endpoint}</span>${
    e.error === undefined ? '' : html`<br><span class="muted small">${e.error}</span>`
  }</td>
<td data-label="Token" class="mono">${e.token_id ?? html`<span class="muted">none</span>`}</td>
<td data-label="User">${
    e.user_id === null
      ? html`<span class="muted">none</span>`
      : html`<span>${
          user === undefined ? '?' : isolate(user.name)
        } <span class="muted small">#${e.user_id}</span></span>`
  }</td>
<td data-label="IP" class="mono">${e.ip}</td>
<td data-label="Duration" class="num">${e.duration_ms.toFixed(1)} ms</td>
</tr>`;
}

/** GET /admin/logs: the API log, newest first, filtered, one page at a time (README, Web pages: "API Logs"). */
export async function adminLogs(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  const { query, problems } = logQuery(ctx, ctx.query);
  let result;
  try {
    result = await ctx.deps.apiLog.read(query);
  } catch (err) {
    if (err instanceof BadCursorError)
      throw new HttpError('bad_request', 'That page link is not valid; start again from the newest entries.');
    throw err;
  }
  const q = ctx.query;
  const input = (name: string, label: string, placeholder: string, type = 'text', list = ''): SafeHtml =>
    html`<div class="field"><label for="f-${name}">${label}</label><input type="${type}" id="f-${name}" name="${name}" \
value="${field(q, name)}" placeholder="${placeholder}"${list === '' ? '' : html` list="${list}"`}></div>`;
  const filters = html`<form method="get" action="/admin/logs" class="card">
<div class="filters">
${input('token', 'Token id', 'e.g. Ab12Cd34')}
${input('user', 'User', 'name or id')}
${input('endpoint', 'Endpoint', '/api/v1/…', 'text', 'endpoints')}
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status">${options(
    STATUS_CHOICES,
    field(q, 'status'),
  )}</select></div>
${input('from', 'From (UTC)', '', 'datetime-local')}
${input('to', 'To (UTC)', '', 'datetime-local')}
</div>
<datalist id="endpoints">${ENDPOINTS.map((e) => html`<option value="${e}">`)}</datalist>
<div class="actions"><button class="btn btn-primary" type="submit">Filter</button><a class="btn btn-ghost" \
href="/admin/logs">Clear</a></div>
</form>`;
  const table =
    result.entries.length === 0
      ? html`<p class="empty">No log entries match.</p>`
      : html`<div class="table-wrap"><table class="stack log-table"><thead><tr><th>Time (UTC)</th><th>Status</th>\
<th>Request</th><th>Token</th><th>User</th><th>IP</th><th>Duration</th></tr></thead><tbody>${result.entries.map((e) =>
          entryRow(ctx, e),
        )}</tbody></table></div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
${
  query.cursor === undefined
    ? html`<span></span>`
    : html`<a class="btn btn-sm" href="${filterLink(q, null)}">↑ Newest</a>`
}
<span class="muted small">${result.entries.length} ${
    result.entries.length === 1 ? 'entry' : 'entries'
  } on this page</span>
${
  result.next === null
    ? html`<span></span>`
    : html`<a class="btn btn-sm" href="${filterLink(q, result.next)}" rel="next">Older →</a>`
}
</nav>`;
  const body = html`${adminTabs('logs')}${problemList(problems)}${filters}\
<section class="card">${table}${pager}</section>`;
  return reply(page(ctx, 'API Logs · Admin', body));
}
