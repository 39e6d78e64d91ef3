import type { Headers } from '../http/reply.ts';
import type { User } from '../auth/records.ts';
import { html, isolate, withoutDirectionControls, type SafeHtml } from './html.ts';
import { ASSET_URLS } from './static.ts';

// connect-src: the paste forms send their files with XMLHttpRequest, to this site only (client/paste-files.ts).
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The headers every web response starts with: its request id, no caching, and no inline
 * script, no framing, no sniffing. One object literal per request: spread from a shared
 * object instead, these objects were promoted out of the young generation by the thousand
 * (bench/README.md, Measured limits).
 */
export const webHeaders = (requestId: string): Headers => ({
  'x-request-id': requestId,
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
});

/** What the page frame needs to know about the request: who is looking, and where. */
export interface Chrome {
  user: User | null;
  readonly path: string;
  csrf: () => string;
  /** A visitor may make an account now: the navigation offers "Register" only then. */
  registrationOpen: () => boolean;
}

export const LOGO = html`<svg class="logo" viewBox="0 0 24 24" aria-hidden="true" width="22" height="22"><rect x="4" \
y="3" width="16" height="18" rx="3" fill="none" stroke="currentColor" stroke-width="2"/><path d="M8 8h8M8 12h8M8 16h5" \
stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>`;

function nav(c: Chrome): SafeHtml {
  const link = (href: string, label: string, match = (p: string): boolean => p === href): SafeHtml =>
    html`<a href="${href}"${match(c.path) ? html` aria-current="page"` : ''}>${label}</a>`;
  if (c.user === null) {
    return html`<nav class="nav">${link('/', 'Recent')}${link('/login', 'Log in')}${
      c.registrationOpen() ? link('/register', 'Register') : ''
    }</nav>`;
  }
  return html`<nav class="nav">
${link('/', 'New paste')}${link('/my', 'My pastes')}${link('/api_keys.php', 'API keys')}${link('/account', 'Account')}${
  c.user.role === 'admin' ? link('/admin/tokens', 'Admin', (p) => p.startsWith('/admin/')) : ''
}
<form method="post" action="/logout" class="nav-logout"><input type="hidden" name="_csrf" \
value="${c.csrf()}"><button type="submit" class="linklike" title="Log out ${c.user.name}">Log out \
<span class="who">${isolate(c.user.name)}</span></button></form>
</nav>`;
}

/** A whole HTML document: the header with navigation, the page's body, a footer. */
export function page(c: Chrome, title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${withoutDirectionControls(title)}</title>
<link rel="stylesheet" href="${ASSET_URLS.css}">
<link rel="icon" href="${ASSET_URLS.icon}" type="image/svg+xml">
<script src="${ASSET_URLS.js}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="top"><div class="wrap top-inner">
<a class="brand" href="/">${LOGO}<span>Paste</span></a>
${nav(c)}
</div></header>
<main class="wrap" id="main">
${body}
</main>
<footer class="foot wrap"><span>Self-hosted paste service</span><span>API under <code>/api/v1/</code></span></footer>
</body>
</html>
`.value;
}
