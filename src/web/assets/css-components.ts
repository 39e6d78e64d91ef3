/** The stylesheet's building blocks: cards, alerts, badges, tables, the code view, QR codes. */
export const CSS_COMPONENTS = `
.card {
  background: var(--surface);
  border: 1px solid var(--border);
  border-radius: var(--radius);
  box-shadow: var(--shadow);
  padding: 22px;
  margin-bottom: 20px;
}
.card > :last-child { margin-bottom: 0; }
.card-head {
  display: flex;
  flex-wrap: wrap;
  align-items: baseline;
  justify-content: space-between;
  gap: 8px 16px;
  margin-bottom: 14px;
}
.card-head h1, .card-head h2 { margin: 0; }
.auth-card .logo { width: 40px; height: 40px; color: var(--accent); margin-bottom: 4px; }
.auth-card form + p { margin-top: 16px; }
.narrow { max-width: 440px; margin-left: auto; margin-right: auto; }
.medium { max-width: 760px; margin-left: auto; margin-right: auto; }
.page-head {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  justify-content: space-between;
  gap: 12px;
  margin-bottom: 18px;
}
.page-head h1 { margin: 0; }
.lede { color: var(--muted); margin-top: -4px; }
.status-code { font-size: 3rem; font-weight: 800; color: var(--accent); margin: 0; letter-spacing: -.03em; }
.columns { display: grid; gap: 20px; grid-template-columns: minmax(0, 1fr); }
@media (min-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr) 340px; align-items: start; } }

/* Alerts */
.alert { border-radius: var(--radius-sm); padding: 12px 16px; margin-bottom: 16px; border: 1px solid transparent; }
.alert ul { margin: 6px 0 0; padding-left: 20px; }
.alert-error {
  background: var(--danger-soft);
  color: var(--danger);
  border-color: color-mix(in srgb, var(--danger) 30%, transparent);
}
.alert-ok {
  background: var(--ok-soft);
  color: var(--ok);
  border-color: color-mix(in srgb, var(--ok) 30%, transparent);
}
.alert-warn {
  background: var(--warn-soft);
  color: var(--warn);
  border-color: color-mix(in srgb, var(--warn) 30%, transparent);
}
.alert-info {
  background: var(--info-soft);
  color: var(--info);
  border-color: color-mix(in srgb, var(--info) 25%, transparent);
}
.secret-box { display: flex; gap: 8px; margin: 12px 0; }
.secret-box input { font-family: var(--mono); font-size: .9rem; color: var(--text); }

/* Warning pages (burn after read, delete) */
.warning-card { text-align: center; padding: 34px 24px; }
.warning-card .icon {
  width: 56px;
  height: 56px;
  margin: 0 auto 12px;
  border-radius: 50%;
  display: grid;
  place-items: center;
  background: var(--warn-soft);
  color: var(--warn);
}
.warning-card .icon.danger { background: var(--danger-soft); color: var(--danger); }
.warning-card form { max-width: 340px; margin: 18px auto 0; text-align: left; }

/* Badges */
.badges { display: flex; flex-wrap: wrap; gap: 6px; }
.badge {
  display: inline-flex;
  align-items: center;
  gap: 4px;
  font-size: .75rem;
  font-weight: 620;
  padding: 2px 9px;
  border-radius: 999px;
  background: var(--surface-2);
  color: var(--muted);
  border: 1px solid var(--border);
  white-space: nowrap;
}
.badge-accent { background: var(--accent-soft); color: var(--accent); border-color: transparent; }
.badge-private, .badge-warn { background: var(--warn-soft); color: var(--warn); border-color: transparent; }
.badge-burn, .badge-bad { background: var(--danger-soft); color: var(--danger); border-color: transparent; }
.badge-ok { background: var(--ok-soft); color: var(--ok); border-color: transparent; }

/* Lists and tables */
.paste-list { list-style: none; margin: 0; padding: 0; }
.paste-list li { border-top: 1px solid var(--border); }
.paste-list li:first-child { border-top: 0; }
.paste-list a.item { display: block; padding: 11px 4px; text-decoration: none; color: var(--text); border-radius: 8px; }
.paste-list a.item:hover { background: var(--surface-2); }
.paste-list .item-title {
  display: block;
  font-weight: 620;
  overflow: hidden;
  text-overflow: ellipsis;
  white-space: nowrap;
}
.paste-list .item-meta {
  display: flex;
  flex-wrap: wrap;
  gap: 4px 10px;
  color: var(--muted);
  font-size: .82rem;
  align-items: center;
}
.empty { color: var(--muted); text-align: center; padding: 26px 10px; }
.table-wrap { overflow-x: auto; margin: 0 -4px; }
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th, td { padding: 11px 10px; border-bottom: 1px solid var(--border); text-align: left; vertical-align: middle; }
th { font-size: .74rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); font-weight: 650; }
tr:last-child td { border-bottom: 0; }
td.num { font-variant-numeric: tabular-nums; }
/* Titles and labels are user text with no spaces guaranteed: "anywhere" (unlike break-word)
   also shrinks the cell's min-content width, so the table column can narrow instead of overflowing. */
td .title-cell { font-weight: 620; }
td .title-cell, .title-text { overflow-wrap: anywhere; }
td.full { min-width: 0; }
.mono { font-family: var(--mono); font-size: .86rem; }
.row-actions { display: flex; flex-wrap: wrap; gap: 6px; justify-content: flex-end; }
.inline-form { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 14px; }
.inline-form input[type="number"] { width: 110px; }
@media (max-width: 720px) {
  table.stack thead { display: none; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr {
    border: 1px solid var(--border);
    border-radius: var(--radius-sm);
    padding: 6px 12px;
    margin-bottom: 10px;
  }
  table.stack td {
    border: 0;
    padding: 6px 0;
    display: flex;
    justify-content: space-between;
    gap: 12px;
    text-align: right;
  }
  table.stack td::before {
    content: attr(data-label);
    color: var(--muted);
    font-size: .8rem;
    font-weight: 650;
    text-align: left;
  }
  table.stack td.full { display: block; text-align: left; }
  table.stack td.full::before { display: block; margin-bottom: 6px; }
  /* The API log on a phone: each entry a compact card of two columns, not seven stacked rows. */
  table.log-table tr { display: grid; grid-template-columns: 1fr 1fr; gap: 2px 14px; padding: 6px 10px; }
  table.log-table td {
    display: block;
    padding: 2px 0;
    text-align: left;
    font-size: .85rem;
    min-width: 0;
    overflow-wrap: anywhere;
  }
  table.log-table td::before { display: block; font-size: .7rem; }
  .row-actions { justify-content: flex-end; }
}
.pager { display: flex; justify-content: space-between; align-items: center; gap: 10px; margin-top: 16px; }
.tabs { display: flex; gap: 4px; border-bottom: 1px solid var(--border); margin-bottom: 20px; }
.tabs a {
  padding: 9px 14px;
  color: var(--muted);
  text-decoration: none;
  font-weight: 620;
  border-bottom: 2px solid transparent;
  margin-bottom: -1px;
}
.tabs a[aria-current="page"] { color: var(--accent); border-bottom-color: var(--accent); }
.filters { display: grid; gap: 12px; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); align-items: end; }
.filters .field { margin: 0; }
.status { font-weight: 700; font-variant-numeric: tabular-nums; }
.status-2 { color: var(--ok); }
.status-3 { color: var(--info); }
.status-4 { color: var(--warn); }
.status-5 { color: var(--danger); }

/* The paste page: head and share side by side on wide screens; on phones the QR code comes after the code. */
.paste-layout {
  display: grid;
  gap: 0 20px;
  grid-template-columns: minmax(0, 1fr);
  grid-template-areas: "head" "code" "files" "share";
}
@media (min-width: 760px) {
  .paste-layout {
    grid-template-columns: minmax(0, 1fr) 232px;
    grid-template-areas: "head share" "code code" "files files";
  }
}
.paste-head { grid-area: head; display: flex; flex-direction: column; }
.paste-head .facts { margin-top: auto; }
.paste-head .paste-title { margin-bottom: 4px; }
.paste-head .lede { margin: 0 0 18px; }
.paste-layout .share { grid-area: share; }
/* The header card keeps its own height beside the taller QR card. */
.paste-layout > .paste-head { align-self: start; }
.paste-layout .code-card { grid-area: code; }
/* A paste's files: images shown within the card's width and a screen's height, the rest as links. */
.paste-layout .files-card { grid-area: files; }
.file-list { list-style: none; margin: 0; padding: 0; display: grid; gap: 14px; }
.file-list .file-name { overflow-wrap: anywhere; font-weight: 600; }
.file-image {
  display: block;
  max-width: 100%;
  max-height: 70vh;
  height: auto;
  margin-top: 6px;
  border: 1px solid var(--border);
}
/* The forms' files: the list of chosen ones, the upload's progress, and the form as a drop target. */
.chosen-files { list-style: none; margin: 8px 0 0; padding: 0; display: grid; gap: 6px; }
.chosen-files li { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; }
.chosen-files .file-name { overflow-wrap: anywhere; }
.current-files { border: 0; padding: 0; margin: 0 0 14px; }
.upload-progress { width: 100%; margin-top: 8px; }
form[data-dropping] { outline: 2px dashed var(--accent); outline-offset: 6px; }
.paste-title { overflow-wrap: anywhere; min-width: 0; margin-top: 8px; }
.head-top { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 8px; }
.owner-tools { display: flex; gap: 4px; margin: -4px -8px -4px 0; }
.facts {
  display: grid;
  grid-template-columns: repeat(auto-fill, minmax(130px, 1fr));
  gap: 14px 20px;
  margin: 0;
  padding: 16px 0 0;
  border-top: 1px solid var(--border);
}
.facts dt {
  font-size: .72rem;
  text-transform: uppercase;
  letter-spacing: .06em;
  color: var(--muted);
  font-weight: 650;
}
.facts dd { margin: 2px 0 0; font-weight: 560; }
.share { display: flex; flex-direction: column; align-items: center; gap: 10px; text-align: center; }
.share .label { margin: 0; }
.shortlink-text {
  display: block;
  font-family: var(--mono);
  font-size: .8rem;
  overflow-wrap: anywhere;
  color: var(--text);
  background: var(--surface-2);
  border: 1px solid var(--border);
  border-radius: 8px;
  padding: 6px 8px;
  width: 100%;
}
.qr {
  display: block;
  width: 150px;
  height: 150px;
  border-radius: 12px;
  background: #fff;
  padding: 8px;
  border: 1px solid var(--border);
}
.qr img { display: block; width: 100%; height: 100%; }
.code-card { padding: 0; overflow: hidden; }
.code-bar {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  justify-content: space-between;
  gap: 8px;
  padding: 10px 14px;
  border-bottom: 1px solid var(--border);
  background: var(--surface-2);
}
.code-bar .info { color: var(--muted); font-size: .85rem; }
.code-bar .tools { display: flex; gap: 6px; flex-wrap: wrap; }

/* The code view: line numbers come from a CSS counter, so they are never copied. */
pre.code {
  margin: 0;
  padding: 12px 0;
  overflow: auto;
  max-height: 78vh;
  background: var(--code-bg);
  font: 13.5px/1.65 var(--mono);
  tab-size: 4;
  counter-reset: ln;
}
pre.code code { display: inline-block; min-width: 100%; font-size: inherit; }
pre.code .l { display: block; white-space: pre; padding-right: 18px; min-height: 1.65em; }
pre.code .l::before {
  counter-increment: ln; content: counter(ln); display: inline-block; position: sticky; left: 0; width: 4.2em;
  padding-right: .9em; margin-right: 1em; text-align: right; color: var(--ln); background: var(--code-bg);
  border-right: 1px solid var(--border); user-select: none;
}
pre.code.snippet {
  max-height: none;
  padding: 12px 16px;
  border-radius: var(--radius-sm);
  border: 1px solid var(--border);
  font-size: 12.5px;
}
pre.code.snippet .l::before { display: none; }
pre.code.snippet .l:hover { background: none; }
pre.code.plain { padding: 12px 16px; white-space: pre; }
pre.code.diff .l::before { display: none; }
pre.code.diff { padding: 12px 16px; }
.inline-form select { width: auto; margin: 0; }
.inline-form input[type="search"] { width: auto; flex: 1 1 14rem; max-width: 26rem; margin: 0; }
.inline-form label { margin: 0; }
.compare { margin-bottom: 12px; }
pre.code .l:hover { background: color-mix(in srgb, var(--accent) 6%, transparent); }
pre.code .l.hl { background: color-mix(in srgb, var(--accent) 16%, transparent); }
#paste-code .l::before { cursor: pointer; }
pre.code.wrap .l { white-space: pre-wrap; overflow-wrap: anywhere; }
.skip {
  position: absolute;
  left: -9999px;
  top: 8px;
  z-index: 10;
  padding: 8px 14px;
  background: var(--surface);
  border: 1px solid var(--border);
  border-radius: var(--radius-sm);
}
.skip:focus { left: 12px; }
.tk-kw { color: var(--tk-kw); font-weight: 600; }
.tk-str { color: var(--tk-str); }
.tk-com { color: var(--tk-com); font-style: italic; }
.tk-num { color: var(--tk-num); }
.tk-fn { color: var(--tk-fn); }
.tk-attr { color: var(--tk-attr); }
.tk-op { color: var(--tk-op); }
.tk-hunk { color: var(--tk-hunk); font-weight: 600; }
pre.code .l:has(> .tk-add:first-child) { background: var(--tk-add); }
pre.code .l:has(> .tk-del:first-child) { background: var(--tk-del); }
.tk-add { color: var(--ok); }
/* A bidi control in code (code-view.ts): its effect ends with its span, and it shows as its code point. */
.bidi { unicode-bidi: isolate; }
.bidi::before {
  content: attr(data-cp);
  font-size: .75em;
  padding: 0 3px;
  border-radius: 3px;
  color: var(--danger);
  border: 1px solid currentColor;
}
.tk-del { color: var(--danger); }
/* A rendered Markdown paste (markdown-view.ts). */
.markdown { padding: 18px 22px; overflow-wrap: anywhere; max-height: 78vh; overflow: auto; }
.markdown > :first-child { margin-top: 0; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4, .markdown h5, .markdown h6 {
  position: relative;
  margin: 1.2em 0 .5em;
}
.markdown .anchor { position: absolute; left: -1em; padding-right: .2em; opacity: 0; text-decoration: none; }
.markdown :is(h1, h2, h3, h4, h5, h6):hover .anchor, .markdown .anchor:focus { opacity: 1; }
.markdown table { border-collapse: collapse; margin: 0 0 1em; display: block; overflow-x: auto; }
.markdown th, .markdown td { border: 1px solid var(--border); padding: 6px 12px; }
.markdown th { background: var(--surface-2); }
.markdown .align-center { text-align: center; }
.markdown .align-right { text-align: right; }
.markdown .align-left { text-align: left; }
.markdown li.task { list-style: none; margin-left: -1.3em; }
.markdown li.task input { margin: 0 .4em 0 0; width: auto; vertical-align: middle; }
.markdown blockquote {
  margin: 0 0 1em;
  padding: 0 1em;
  color: var(--muted);
  border-left: 3px solid var(--border-strong);
}
.markdown img { max-width: 100%; }
.markdown pre.md-code {
  padding: 12px 16px;
  overflow: auto;
  background: var(--code-bg);
  border: 1px solid var(--border);
  border-radius: var(--radius-sm);
  font: 13px/1.6 var(--mono);
}

/* Quick start steps */
.steps { margin: 0; padding-left: 20px; color: var(--muted); }
.steps li { margin-bottom: 4px; }
.hero { text-align: center; padding: 34px 22px; }
.hero h1 { font-size: 1.8rem; }
.hero .actions { justify-content: center; }

/* Encrypted pastes (web/encrypted-view.ts): the create form's option, and the page's status and password. */
.encrypt { border: 1px solid var(--border); border-radius: var(--radius-sm); padding: 12px 16px; margin: 0 0 18px; }
.sealed-status, .sealed-password { padding: 16px 18px; margin: 0; }
.sealed-password input[type="password"] { width: auto; margin: 0; }
`;
