import { filesOf } from '../paste/files.ts';
import { contentOf, type Paste } from '../paste/paste.ts';
import { clientUrl } from './client-asset.ts';
import type { WebContext } from './context.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * The parts of an encrypted paste's page (README, Encrypted pastes). The server cannot read
 * the text: the page carries the envelope as it was sent, and the browser module
 * (client/encrypted-paste.ts) decrypts it with the key in the link's fragment, highlights
 * it, and fills in the link to share. No inline script: app.js imports the module a page names.
 */

/** Marks an element whose page needs the module: app.js imports it, so every page keeps one script tag. */
const MODULE = (): SafeHtml => html` data-module="${clientUrl()}"`;

/** What the page says of the text, in place of its lines and size. */
export const sealedLede = (p: Paste): SafeHtml =>
  html`Encrypted in its author's browser &middot; ${Buffer.byteLength(contentOf(p))} bytes the server cannot read`;

/** The code card: the envelope, the place the text goes, and the password form a password-protected envelope needs. */
export function sealedCard(p: Paste): SafeHtml {
  return html`<section class="card code-card" id="sealed"${MODULE()} data-envelope="${contentOf(p)}" \
data-language="${p.language}" data-highlight="${p.highlight}">
<div class="code-bar"><span class="info" id="sealed-language">Encrypted</span>
<span class="tools"><button class="btn btn-sm" type="button" data-wrap aria-pressed="false" \
hidden>Wrap</button><button class="btn btn-sm" type="button" data-copy="paste-code" hidden>Copy</button></span></div>
<div class="sealed-status" id="sealed-status" role="status"><p>This paste is encrypted. Your browser decrypts it with \
the key in the link, which needs JavaScript.</p></div>
<form class="inline-form sealed-password" id="sealed-password" hidden><label for="sealed-pw">Password</label><input \
type="password" id="sealed-pw" autocomplete="off"><button class="btn btn-sm btn-primary" \
type="submit">Decrypt</button></form>
<pre class="code" id="paste-code" tabindex="0" hidden></pre>
</section>`;
}

/**
 * The link to share, with its key and its QR code, both made in the browser: the server's short link cannot hold
 * the key.
 */
export const sealedShare = (): SafeHtml =>
  html`<aside class="card share" id="sealed-share" aria-label="Link with its key" hidden>
<span class="label">Link with its key</span>
<span class="qr"><img id="sealed-qr" width="134" height="134" alt="QR code for the link with its key"></span>
<a class="shortlink-text" id="sealed-link" href="#"></a>
<button class="btn btn-sm" type="button" data-copy="sealed-link" hidden>Copy link</button>
<p class="hint">Made in your browser. The server's short link cannot hold the key, so it would not open this paste: \
share this link.</p>
</aside>`;

/**
 * The create form's option: encrypt before sending, with an optional password (never sent: these fields have no
 * name).
 */
export const encryptOption = (): SafeHtml =>
  html`<fieldset class="encrypt" data-encrypt${MODULE()} hidden>
<label class="check"><input type="checkbox" id="encrypt" value="1"> Encrypt in my browser</label>
<div class="field"><label for="encrypt-password">Encryption password <span \
class="muted small">(optional)</span></label><input type="password" id="encrypt-password" \
autocomplete="new-password"></div>
<p class="hint">The text is encrypted here (AES-256-GCM) with a random key before it is sent; the key is only in the \
link, after its <code>#</code>, which browsers never send to a server. With a password, the link and the password are \
both needed. Files are encrypted too, names included. The title and the settings are not encrypted.</p>
<div id="encrypt-status" role="alert" hidden></div>
</fieldset>`;

/**
 * The forms before an encrypted paste (its burn warning, its password) load the module, which keeps the key in
 * them.
 */
export const keepKey = (p: Paste): SafeHtml => (p.encrypted === 1 ? html` data-keep-key${MODULE()}` : html``);

/**
 * An encrypted paste's page shows its decrypted images from Blob URLs (client/encrypted-paste.ts):
 * its policy alone takes `blob:` images, and only when the paste has files; nothing else widens.
 */
export function allowBlobImages(ctx: Pick<WebContext, 'headers'>, p: Paste): void {
  if (p.encrypted !== 1 || filesOf(p).length === 0) return;
  const policy = ctx.headers['content-security-policy'];
  if (typeof policy === 'string')
    ctx.headers['content-security-policy'] = policy.replace("img-src 'self' data:", "img-src 'self' data: blob:");
}
