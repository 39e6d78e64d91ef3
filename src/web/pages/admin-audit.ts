import { html as reply, type Reply } from '../../http/reply.ts';
import type { AuditEntry } from '../../log/audit.ts';
import { formatTime } from '../../paste/paste.ts';
import { field, type WebContext } from '../context.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { adminTabs } from './admin-tokens.ts';

export const AUDIT_PAGE_SIZE = 50;

const shown = (v: unknown): string => (v === undefined ? '–' : JSON.stringify(v));

/** What changed: the fields whose value differs, `name: before → after`; a whole object when one side is empty. */
function changes(e: AuditEntry): SafeHtml {
  const b = e.before as Record<string, unknown> | null;
  const a = e.after as Record<string, unknown> | null;
  if (b === null && a === null) return html`<span class="muted">–</span>`;
  if (b === null || a === null || typeof a !== 'object' || typeof b !== 'object') {
    const [word, obj] = b === null ? ['now', a] : a === null ? ['was', b] : ['now', a];
    return html`<span class="muted small">${word}</span> <span class="mono small">${isolate(shown(obj))}</span>`;
  }
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => shown(b[k]) !== shown(a[k]));
  if (keys.length === 0) return html`<span class="muted">no change</span>`;
  return html`${keys.map(
    (k) => html`<span class="mono small">${k}: ${isolate(shown(b[k]))} → ${isolate(shown(a[k]))}</span><br>`,
  )}`;
}

function entryRow(e: AuditEntry): SafeHtml {
  const who =
    e.via === 'cli'
      ? html`<span class="badge">CLI</span>${
          e.user === null ? '' : html` <span class="muted small">${isolate(e.user)}</span>`
        }`
      : html`${e.via === 'api' ? html`<span class="badge">API</span> ` : ''}${isolate(e.user ?? '?')}${
          e.user_id === null ? '' : html` <span class="muted small">#${e.user_id}</span>`
        }`;
  return html`<tr>
<td data-label="Time (UTC)" class="mono">${formatTime(Date.parse(e.time))}</td>
<td data-label="Who">${who}</td>
<td data-label="Action" class="mono">${e.action}</td>
<td data-label="Target" class="mono">${isolate(e.target)}</td>
<td class="full" data-label="Change">${changes(e)}</td>
<td data-label="IP" class="mono">${e.ip ?? html`<span class="muted">–</span>`}</td>
</tr>`;
}

/** GET /admin/audit: what admins did, newest first (README, Audit log). */
export async function adminAudit(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  const n = Number(field(ctx.query, 'page') || '1');
  const pageNo = Number.isSafeInteger(n) && n >= 1 && n <= 100_000 ? n : 1;
  const { entries, more } = await ctx.deps.audit.read((pageNo - 1) * AUDIT_PAGE_SIZE, AUDIT_PAGE_SIZE);
  const table =
    entries.length === 0
      ? html`<p class="empty">${pageNo === 1 ? 'No admin actions yet.' : 'Nothing on this page.'}</p>`
      : html`<div class="table-wrap"><table class="stack log-table"><thead><tr><th>Time (UTC)</th><th>Who</th>\
<th>Action</th><th>Target</th><th>Change</th><th>IP</th></tr></thead><tbody>${entries.map(entryRow)}</tbody></table>\
</div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
${
  pageNo === 1
    ? html`<span></span>`
    : html`<a class="btn btn-sm" href="/admin/audit${pageNo === 2 ? '' : `?page=${pageNo - 1}`}">← Newer</a>`
}
<span class="muted small">Page ${pageNo}</span>
${
  more ? html`<a class="btn btn-sm" href="/admin/audit?page=${pageNo + 1}" rel="next">Older →</a>` : html`<span></span>`
}
</nav>`;
  const body = html`${adminTabs('audit')}<section class="card"><div class="card-head"><h2>Audit log</h2>\
<span class="muted small">every admin action, on the web or with the CLI · kept in logs/audit-*.jsonl</span>\
</div>${table}${pager}</section>`;
  return reply(page(ctx, 'Audit · Admin', body));
}
