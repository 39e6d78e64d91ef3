/** The stylesheet's foundation: colours (light and dark), type, page frame, forms, buttons. */
export const CSS_BASE = `
:root {
  color-scheme: light dark;
  --bg: #f5f6f8; --surface: #ffffff; --surface-2: #f0f2f5; --border: #e2e5ea; --border-strong: #cfd4dc;
  --text: #1b2130; --muted: #5d6879; --accent: #4f46e5; --accent-hover: #4338ca; --accent-text: #ffffff;
  --accent-soft: #eceafe; --ring: rgba(79, 70, 229, .28);
  --danger: #d92d20; --danger-soft: #fdecea; --ok: #157f3b; --ok-soft: #e7f6ec; --warn: #a15c07; --warn-soft: #fdf3e1;
  --info-soft: #e8f1fd; --info: #1d5fb8;
  --shadow: 0 1px 2px rgba(16, 24, 40, .04), 0 6px 20px rgba(16, 24, 40, .05);
  /* Line numbers and placeholders reach 4.5:1 against their background in both themes. */
  --code-bg: #fbfbfd; --ln: #66707f;
  --tk-kw: #8a3ed8; --tk-str: #0b7a3e; --tk-com: #66707f; --tk-num: #b4530a; --tk-fn: #2459d1;
  --tk-attr: #0b7285; --tk-op: #b3236d; --tk-add: #e6f7eb; --tk-del: #fdecee; --tk-hunk: #6f42c1;
  --radius: 14px; --radius-sm: 10px;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0e1117; --surface: #161b24; --surface-2: #1d2330; --border: #283041; --border-strong: #364055;
    --text: #e5e8ee; --muted: #98a2b3; --accent: #8b93ff; --accent-hover: #a5abff; --accent-text: #0e1117;
    --accent-soft: #24284a; --ring: rgba(139, 147, 255, .35);
    --danger: #ff6b5e; --danger-soft: #3a1c1c; --ok: #5dd39e; --ok-soft: #15301f; --warn: #f5b453; --warn-soft: #352812;
    --info-soft: #16263d; --info: #7cb4ff;
    --shadow: 0 1px 2px rgba(0, 0, 0, .3), 0 8px 24px rgba(0, 0, 0, .25);
    --code-bg: #11151d; --ln: #8a94a6;
    --tk-kw: #c79bff; --tk-str: #9fdc8f; --tk-com: #7d8799; --tk-num: #f7b072; --tk-fn: #82aaff;
    --tk-attr: #6fd3e6; --tk-op: #ff8fb1; --tk-add: #14301f; --tk-del: #3a1d22; --tk-hunk: #c6a5ff;
  }
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; min-height: 100vh; display: flex; flex-direction: column;
  background: var(--bg); color: var(--text); font: 16px/1.55 var(--sans);
}
a { color: var(--accent); text-decoration-thickness: 1px; text-underline-offset: 2px; }
a:hover { color: var(--accent-hover); }
h1, h2, h3 { line-height: 1.25; margin: 0 0 .5em; letter-spacing: -.01em; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.2rem; }
h3 { font-size: 1rem; }
p { margin: 0 0 1em; }
code, kbd { font-family: var(--mono); font-size: .9em; }
:not(pre) > code {
  background: var(--surface-2);
  border: 1px solid var(--border);
  border-radius: 6px;
  padding: .05em .35em;
}
.muted { color: var(--muted); }
::placeholder { color: var(--muted); opacity: 1; }
.small { font-size: .875rem; }
.center { text-align: center; }
.wrap { width: 100%; max-width: 1120px; margin: 0 auto; padding: 0 16px; }
main.wrap { flex: 1; padding-top: 24px; padding-bottom: 40px; }
.offscreen { position: fixed; left: -9999px; top: 0; }

/* Header and navigation */
.top {
  position: sticky; top: 0; z-index: 10; background: color-mix(in srgb, var(--surface) 88%, transparent);
  backdrop-filter: saturate(1.4) blur(10px); border-bottom: 1px solid var(--border);
}
.top-inner { display: flex; align-items: center; gap: 16px; min-height: 58px; flex-wrap: wrap; }
.brand {
  display: inline-flex;
  align-items: center;
  gap: 8px;
  font-weight: 750;
  font-size: 1.1rem;
  color: var(--text);
  text-decoration: none;
}
.brand .logo { color: var(--accent); }
.brand:hover { color: var(--text); }
.nav { display: flex; align-items: center; gap: 4px; margin-left: auto; overflow-x: auto; scrollbar-width: none; }
.nav a, .nav .linklike {
  padding: 7px 12px; border-radius: 999px; color: var(--muted); text-decoration: none; font-weight: 550;
  font-size: .94rem; white-space: nowrap;
}
.nav a:hover, .nav .linklike:hover { background: var(--surface-2); color: var(--text); }
.nav a[aria-current="page"] { background: var(--accent-soft); color: var(--accent); }
.nav-logout { margin: 0 0 0 4px; }
.linklike { background: none; border: 0; font: inherit; cursor: pointer; }
.who { color: var(--text); font-weight: 650; }
@media (max-width: 640px) {
  .top-inner { gap: 4px; padding-top: 8px; padding-bottom: 6px; }
  .nav { margin-left: -8px; width: calc(100% + 16px); flex-wrap: wrap; row-gap: 2px; }
  .nav a, .nav .linklike { padding: 5px 10px; font-size: .9rem; }
  .nav-logout { margin-left: 0; }
  .nav .who { display: none; }
  h1 { font-size: 1.35rem; }
}
.foot {
  display: flex;
  flex-wrap: wrap;
  justify-content: space-between;
  gap: 8px;
  padding-top: 18px;
  padding-bottom: 24px;
  color: var(--muted);
  font-size: .85rem;
  border-top: 1px solid var(--border);
}

/* Forms */
form { margin: 0; }
.field { margin-bottom: 16px; }
.field > label, .label { display: block; font-weight: 620; font-size: .9rem; margin-bottom: 6px; }
.hint { display: block; color: var(--muted); font-size: .82rem; margin-top: 5px; font-weight: 400; }
input[type="text"], input[type="search"], input[type="password"], input[type="number"], input[type="url"],
input[type="datetime-local"], select, textarea {
  width: 100%; padding: 10px 12px; font: inherit; font-size: .95rem; color: var(--text);
  background: var(--surface); border: 1px solid var(--border-strong); border-radius: var(--radius-sm);
  transition: border-color .15s, box-shadow .15s;
}
select {
  appearance: none; padding-right: 34px;
  background-image:
    linear-gradient(45deg, transparent 50%, var(--muted) 50%),
    linear-gradient(135deg, var(--muted) 50%, transparent 50%);
  background-position: calc(100% - 18px) 52%, calc(100% - 13px) 52%;
  background-size: 5px 5px; background-repeat: no-repeat;
}
textarea { resize: vertical; line-height: 1.5; }
textarea.code-input { font-family: var(--mono); font-size: .88rem; min-height: 300px; tab-size: 4; white-space: pre; }
input:focus, select:focus, textarea:focus {
  outline: none;
  border-color: var(--accent);
  box-shadow: 0 0 0 4px var(--ring);
}
input[readonly] { background: var(--surface-2); }
.grid { display: grid; gap: 14px; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); }
.grid .field { margin-bottom: 0; }
.checks { display: flex; flex-wrap: wrap; gap: 10px 22px; margin: 18px 0; }
.check { display: inline-flex; align-items: center; gap: 8px; font-size: .94rem; cursor: pointer; }
.check input[type="checkbox"] { width: 18px; height: 18px; accent-color: var(--accent); margin: 0; }
.actions { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; margin-top: 18px; }

/* Buttons */
.btn {
  display: inline-flex; align-items: center; justify-content: center; gap: 6px; padding: 9px 16px; min-height: 40px;
  border-radius: var(--radius-sm); border: 1px solid var(--border-strong); background: var(--surface);
  color: var(--text);
  font: inherit; font-weight: 620; font-size: .94rem; text-decoration: none; cursor: pointer; white-space: nowrap;
  transition: background .15s, border-color .15s, transform .05s;
}
.btn:hover { background: var(--surface-2); color: var(--text); }
.btn:active { transform: translateY(1px); }
.btn:focus-visible { outline: none; box-shadow: 0 0 0 4px var(--ring); }
.btn-primary { background: var(--accent); border-color: var(--accent); color: var(--accent-text); }
.btn-primary:hover { background: var(--accent-hover); border-color: var(--accent-hover); color: var(--accent-text); }
.btn-danger { background: var(--danger); border-color: var(--danger); color: #fff; }
.btn-danger:hover { background: var(--danger); color: #fff; filter: brightness(1.08); }
.btn-ghost { background: transparent; border-color: transparent; color: var(--muted); }
.btn-sm { padding: 5px 11px; min-height: 32px; font-size: .85rem; border-radius: 8px; }
.btn-block { width: 100%; }
.btn.copied, .btn-primary.copied { background: var(--ok-soft); border-color: var(--ok); color: var(--ok); }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { transition: none !important; animation: none !important; }
}
`;
