import { detectLanguage } from '../../paste/language.ts';
import {
  decryptEnvelope,
  EnvelopeRefused,
  encryptText,
  isKey,
  needsPassword,
  newKey,
  openEnvelope,
  openFile,
  sealFile,
} from '../../paste/envelope-crypto.ts';
import type { Envelope } from '../../paste/envelope.ts';
import { contentLines, shownText } from '../code-view.ts';
import { FILE_VIEW_MAX_BYTES, fileLanguage } from '../file-language.ts';
import { languageLabel } from '../languages.ts';
import { qrSvg } from '../qr.ts';
import { doc, type El, loc, whenReady } from './dom.ts';
import { sizeText } from './paste-files.ts';

/**
 * The browser's side of encrypted pastes (README, Encrypted pastes), served as
 * /static/encrypted-paste.js (web/client-asset.ts bundles it from these sources): the
 * create form encrypts before it sends, and the paste page decrypts with the key in the
 * link's fragment, then highlights with the server's own highlighter. The key never
 * leaves the browser: it is neither sent nor stored.
 */

/** What a reader without the right key (or password) is told, whatever went wrong. */
export const LACKS_KEY = 'This paste is encrypted; the link you have lacks its key.';

const byId = (id: string): El | null => doc().getElementById(id);

/** The little of File, Blob, DataTransfer and URL this module uses (dom.ts says why they are typed here). */
interface FileLike {
  readonly name: string;
  readonly type: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}
interface Web {
  DataTransfer: new () => { readonly files: unknown; readonly items: { add(f: unknown): void } };
  File: new (parts: unknown[], name: string, opts: { type: string }) => unknown;
  Blob: new (parts: unknown[], opts: { type: string }) => unknown;
  URL: { createObjectURL(blob: unknown): string };
  fetch(url: string): Promise<{ ok: boolean; text(): Promise<string> }>;
}
const web = globalThis as unknown as Web;

/** The images the page shows from their decrypted bytes: the raster types the server shows inline (paste-view.ts). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Why a file was not sealed, in words for the person who chose it: nothing was sent. */
class NotSealed extends Error {}

/**
 * The form's chosen files, each replaced by its envelope under an opaque name (`f1.enc`,
 * `f2.enc`, ...): the real name, type and size are inside (envelope-crypto.ts, sealFile).
 * The page's limit is the file's before it is encrypted; the server takes its envelope.
 */
async function sealFiles(form: El, key: string, password: string): Promise<void> {
  const input = form.querySelector('input[type="file"]') as (El & { files: ArrayLike<FileLike> | null }) | null;
  if (input === null || input.files === null || input.files.length === 0) return;
  const max = Number(form.querySelector('[data-max-file-bytes]')?.getAttribute('data-max-file-bytes') ?? Number.NaN);
  const sealed = new web.DataTransfer();
  // On the edit form the paste's own files keep their names: a new one takes the first free.
  const taken = new Set(Array.from(form.querySelectorAll('input[name="remove_file"]')).map((b) => b.value));
  let n = 0;
  for (const f of Array.from(input.files)) {
    while (taken.has(`f${++n}.enc`));
    const bytes = new Uint8Array(await f.arrayBuffer());
    if (bytes.length > max)
      throw new NotSealed(`${f.name} is larger than ${sizeText(max)}, the most a file may hold; nothing was sent.`);
    const envelope = await sealFile({ name: f.name, type: f.type, size: bytes.length }, bytes, key, {
      password,
    }).catch((err: unknown) => {
      throw err instanceof EnvelopeRefused ? new NotSealed(`${f.name}: ${err.message}; nothing was sent.`) : err;
    });
    sealed.items.add(new web.File([envelope], `f${n}.enc`, { type: 'application/octet-stream' }));
  }
  (input as unknown as { files: unknown }).files = sealed.files;
}

/**
 * A hidden field put first in the form: `encrypted=1` ahead of the files is what lets the
 * server take an envelope larger than MAX_FILE_BYTES while it reads them (pipeline/uploads.ts).
 */
function fieldFirst(form: El, name: string, value: string): void {
  const input = doc().createElement('input');
  input.type = 'hidden';
  input.name = name;
  input.value = value;
  form.insertBefore(input, form.firstChild);
}

/** What the form's status says when the files could not be sealed. */
const unsealed = (err: unknown, otherwise: string): string[] => [err instanceof NotSealed ? err.message : otherwise];

function say(status: El | null, lines: string[]): void {
  if (status === null) return;
  status.innerHTML = '';
  for (const line of lines) {
    const p = doc().createElement('p');
    p.textContent = line;
    status.appendChild(p);
  }
  status.hidden = false;
}

/** The create form: with "Encrypt in my browser" ticked, only the envelope is sent, and the key goes into the link. */
function armCreateForm(box: El): void {
  const form = box.form ?? box.querySelector('form');
  const tick = byId('encrypt');
  const content = form?.querySelector('textarea[name="content"]') ?? null;
  if (form === null || tick === null || content === null) return;
  box.hidden = false;
  let sending = false;
  form.addEventListener('submit', (ev) => {
    if (!(tick as unknown as { checked: boolean }).checked) return;
    ev.preventDefault();
    if (sending) return;
    sending = true;
    const key = newKey();
    const password = byId('encrypt-password')?.value ?? '';
    Promise.all([encryptText(content.value, key, { password }), sealFiles(form, key, password)]).then(
      ([envelope]) => {
        content.removeAttribute('name');
        fieldFirst(form, 'content', envelope);
        fieldFirst(form, 'encrypted', '1');
        // The answer is a redirect to the paste, which keeps this fragment: /p/<hash>#<key>.
        form.action = `/#${key}`;
        form.submit();
      },
      (err: unknown) => {
        sending = false;
        say(
          byId('encrypt-status'),
          unsealed(err, 'This browser could not encrypt the text or the files; nothing was sent.'),
        );
      },
    );
  });
}

/** Forms that lead on to the paste (its burn warning, its password), and its Edit link, keep the key for the page they lead to. */
function keepKeyInForms(): void {
  const key = loc().hash.slice(1);
  if (!isKey(key)) return;
  const forms = doc().querySelectorAll('form[data-keep-key]');
  for (let i = 0; i < forms.length; i++) {
    const f = forms[i] as El;
    f.action = `${f.getAttribute('action') ?? ''}#${key}`;
  }
  const links = doc().querySelectorAll('a[data-keep-key]');
  for (let i = 0; i < links.length; i++) {
    const a = links[i] as El;
    a.href = `${a.getAttribute('href') ?? ''}#${key}`;
  }
}

/**
 * The edit form of an encrypted paste, opened with the key in the link: its files are
 * sealed as the create form seals them, once the key and password have opened the
 * paste's own text (so a wrong password seals nothing). Without the key it stays shut.
 */
function armSealedEdit(box: El): void {
  const key = loc().hash.slice(1);
  const input = box.querySelector('input[type="file"]') as (El & { files: ArrayLike<unknown> | null }) | null;
  const form = input?.form ?? null;
  if (!isKey(key) || input === null || form === null) return;
  box.hidden = false;
  input.removeAttribute('disabled');
  // The answer is a redirect to the paste, which keeps this fragment.
  form.action = `${form.getAttribute('action') ?? ''}#${key}`;
  let sending = false;
  form.addEventListener('submit', (ev) => {
    if ((input.files?.length ?? 0) === 0) return;
    ev.preventDefault();
    if (sending) return;
    sending = true;
    const password = byId('encrypt-password')?.value ?? '';
    const text = form.querySelector('textarea[name="content"]')?.value ?? '';
    decryptEnvelope(text, key, password)
      .then(() => sealFiles(form, key, password))
      .then(
        () => {
          fieldFirst(form, 'encrypted', '1');
          form.submit();
        },
        (err: unknown) => {
          sending = false;
          say(
            byId('encrypt-status'),
            unsealed(err, 'The key in the link or the password does not open this paste, so its files were not sent.'),
          );
        },
      );
  });
}

/** The paste page: decrypts the envelope the page holds, with the link's key (and the password). */
function openSealed(box: El): void {
  const status = byId('sealed-status');
  const key = loc().hash.slice(1);
  let envelope: Envelope;
  try {
    envelope = openEnvelope(box.getAttribute('data-envelope') ?? '');
  } catch (err) {
    const newer = err instanceof EnvelopeRefused && err.kind === 'version';
    say(status, [
      newer ? 'This paste was encrypted by a newer version of the site; this page cannot open it.' : LACKS_KEY,
    ]);
    return;
  }
  if (!isKey(key)) {
    say(status, [LACKS_KEY]);
    return;
  }
  const text = box.getAttribute('data-envelope') ?? '';
  const attempt = (password: string): Promise<void> =>
    decryptEnvelope(text, key, password).then(
      (plain) => {
        show(box, status, key, plain);
        openFiles(key, password);
      },
      () =>
        say(
          status,
          password === '' ? [LACKS_KEY] : [LACKS_KEY, 'If the link is whole, the password is wrong: try again.'],
        ),
    );
  if (!needsPassword(envelope)) {
    void attempt('');
    return;
  }
  const form = byId('sealed-password');
  const input = byId('sealed-pw');
  if (form === null || input === null) return;
  say(status, ['This paste is encrypted with a password as well as the key in its link.']);
  form.hidden = false;
  input.focus();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void attempt(input.value);
  });
}

/** The lines of a code block, each a span the stylesheet numbers (code-view.ts, codeBlock). */
const linesHtml = (lines: readonly string[]): string =>
  `<code><span class="l">${lines.join('</span><span class="l">')}</span></code>`;

/** A file's bytes as text, or null when they are not UTF-8. */
function utf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
    return null;
  }
}

/**
 * A decrypted text file as the server shows a paste's (file-view.ts): its language by its
 * name, at most FILE_VIEW_MAX_BYTES of valid UTF-8, highlighted by the same code, escaped.
 * Null when it is not one to show; `href` is the download, which has all of a long one.
 */
function fileCode(f: { name: string; bytes: Uint8Array }, id: string, href: string): { label: string; box: El } | null {
  const language = fileLanguage(f.name);
  const text = language === undefined || f.bytes.length > FILE_VIEW_MAX_BYTES ? null : utf8(f.bytes);
  if (language === undefined || text === null) return null;
  const shown = shownText(text);
  const box = doc().createElement('div');
  box.setAttribute('class', 'file-code');
  const pre = doc().createElement('pre');
  pre.setAttribute('class', 'code');
  pre.setAttribute('id', id);
  pre.setAttribute('tabindex', '0');
  pre.setAttribute('data-language', language);
  pre.innerHTML = linesHtml(contentLines({ content: shown, language, highlight: 1 }));
  box.appendChild(pre);
  if (shown.length < text.length) {
    const note = doc().createElement('div');
    note.setAttribute('class', 'alert alert-info');
    note.setAttribute('role', 'status');
    note.textContent = 'This file is long: the page shows only its beginning. ';
    const all = doc().createElement('a');
    all.href = href;
    all.setAttribute('download', f.name);
    all.textContent = 'The file';
    note.appendChild(all);
    note.appendChild(doc().createTextNode(' has all of it.'));
    box.appendChild(note);
  }
  return { label: languageLabel(language), box };
}

/**
 * The paste's files, once its text opened with the same key and password: each is fetched,
 * decrypted and offered under its real name from a Blob URL; an image is also shown, and a
 * text file highlighted by its name as the server shows a paste's. The download's Blob is
 * untyped, so opening it can never render a page of this site.
 */
function openFiles(key: string, password: string): void {
  const items = doc().querySelectorAll('[data-sealed-file]');
  for (let i = 0; i < items.length; i++) {
    const li = items[i] as El;
    const href = li.getAttribute('data-sealed-file') ?? '';
    // Fetched once: a one-time paste's grant opens each file once (paste/file-grant.ts).
    li.removeAttribute('data-sealed-file');
    web
      .fetch(href)
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error('not fetched'))))
      .then((envelope) => openFile(envelope, key, password))
      .then(
        (f) => {
          li.innerHTML = '';
          const a = doc().createElement('a');
          a.setAttribute('class', 'file-name');
          a.href = web.URL.createObjectURL(new web.Blob([f.bytes], { type: 'application/octet-stream' }));
          a.setAttribute('download', f.name);
          const name = doc().createElement('bdi');
          name.textContent = f.name;
          a.appendChild(name);
          const size = doc().createElement('span');
          size.setAttribute('class', 'muted');
          size.textContent = ` ${sizeText(f.size)}`;
          li.appendChild(a);
          li.appendChild(size);
          if (!IMAGE_TYPES.has(f.type)) {
            const code = fileCode(f, `file-code-${i}`, a.href);
            if (code === null) return;
            size.textContent += ` \u00b7 ${code.label}`;
            li.appendChild(code.box);
            return;
          }
          const img = doc().createElement('img');
          img.setAttribute('class', 'file-image');
          img.setAttribute('alt', f.name);
          img.src = web.URL.createObjectURL(new web.Blob([f.bytes], { type: f.type }));
          li.appendChild(img);
        },
        () => {
          const note = doc().createElement('span');
          note.setAttribute('class', 'muted small');
          note.textContent = ' (this file could not be decrypted)';
          li.appendChild(note);
        },
      );
  }
}

/** Shows the text, highlighted as the server would, and the link with its key to share. */
function show(box: El, status: El | null, key: string, plain: string): void {
  const asked = box.getAttribute('data-language') ?? 'auto';
  const language = asked === 'auto' ? detectLanguage(plain) : asked;
  const lines = contentLines({
    content: plain,
    language,
    highlight: box.getAttribute('data-highlight') === '1' ? 1 : 0,
  });
  const pre = byId('paste-code');
  if (pre === null) return;
  pre.innerHTML = linesHtml(lines);
  pre.hidden = false;
  pre.setAttribute('data-language', language);
  const label = byId('sealed-language');
  if (label !== null) label.textContent = `${languageLabel(language)} · decrypted in this browser`;
  const form = byId('sealed-password');
  if (form !== null) form.hidden = true;
  if (status !== null) status.hidden = true;
  const share = byId('sealed-share');
  const link = byId('sealed-link');
  const qr = byId('sealed-qr');
  if (share === null || link === null || qr === null) return;
  const url = `${loc().origin}${loc().pathname}#${key}`;
  // Wrapped after the scheme and before the path, as the short link is (paste-view.ts), never inside the port.
  const origin = loc().origin;
  const host = origin.indexOf('//') + 2;
  link.textContent = '';
  for (const part of [origin.slice(0, host), origin.slice(host), url.slice(origin.length)]) {
    if (link.textContent !== '') link.appendChild(doc().createElement('wbr'));
    const span = doc().createElement('span');
    span.textContent = part;
    link.appendChild(span);
  }
  link.href = url;
  qr.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(qrSvg(url, 'QR code for the link with its key'))}`;
  share.hidden = false;
}

whenReady(() => {
  keepKeyInForms();
  const create = doc().querySelector('[data-encrypt]');
  if (create !== null) armCreateForm(create);
  const sealed = byId('sealed');
  if (sealed !== null) openSealed(sealed);
  const edit = doc().querySelector('[data-sealed-files]');
  if (edit !== null) armSealedEdit(edit);
});
