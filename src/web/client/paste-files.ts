import { sizeLabel } from '../size-label.ts';
import { doc, type El, loc, whenReady } from './dom.ts';

/**
 * The paste forms' files in the browser (README, Web pages): the file input's choice, files
 * dropped on the form and an image pasted from the clipboard gather in one list with a
 * remove button each; the form is then sent with XMLHttpRequest to show the upload's
 * progress. Without this module the plain file input and a multipart form still work.
 */

/** The little of File, DataTransfer, XMLHttpRequest and FormData this module uses. */
interface FileLike {
  readonly name: string;
  readonly size: number;
  readonly type: string;
}
interface FileList {
  readonly length: number;
  [i: number]: FileLike;
}
interface Transfer {
  readonly files: FileList;
  readonly items: { add(f: FileLike): void };
}
interface FileInput extends El {
  files: FileList | null;
}
interface DragEv {
  preventDefault(): void;
  stopImmediatePropagation(): void;
  readonly dataTransfer?: Transfer | null;
  readonly clipboardData?: Transfer | null;
}
interface Xhr {
  open(method: string, url: string): void;
  send(body: unknown): void;
  readonly status: number;
  readonly responseURL: string;
  readonly responseText: string;
  readonly upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
}
interface Web {
  DataTransfer: new () => Transfer;
  XMLHttpRequest: new () => Xhr;
  FormData: new (form: El) => unknown;
  File: new (parts: unknown[], name: string, opts: { type: string }) => FileLike;
  document: { open(): void; write(s: string): void; close(): void };
  location: { assign(url: string): void };
}
const web = globalThis as unknown as Web;

/** `screenshot-YYYYMMDD-HHMMSS.png`, in the browser's local time, for an image pasted from the clipboard. */
export function screenshotName(at: Date, type: string): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  const ext = type === 'image/jpeg' ? 'jpg' : (type.split('/')[1] ?? 'png').replace(/[^a-z0-9]/g, '') || 'png';
  return `screenshot-${at.getFullYear()}${two(at.getMonth() + 1)}${two(at.getDate())}-${two(at.getHours())}\
${two(at.getMinutes())}${two(at.getSeconds())}.${ext}`;
}

/** Sizes as the pages say them, so a refusal names the limit the form states. */
export const sizeText = sizeLabel;

function armFiles(box: El): void {
  const input = box.querySelector('input[type="file"]') as FileInput | null;
  const form = input?.form ?? null;
  const list = box.querySelector('[data-files-list]');
  const progress = box.querySelector('[data-files-progress]');
  const status = box.querySelector('[data-files-status]');
  if (input === null || form === null || list === null || progress === null || status === null) return;
  const hint = box.querySelector('[data-files-hint]');
  if (hint !== null) hint.hidden = false;
  const maxBytes = Number(box.getAttribute('data-max-file-bytes'));
  const maxFiles = Number(box.getAttribute('data-max-files'));
  let chosen: FileLike[] = [];

  const say = (message: string): void => {
    status.textContent = message;
    status.hidden = message === '';
  };
  // The input holds the list, so a form sent without this module's help still carries it.
  const sync = (): void => {
    const dt = new web.DataTransfer();
    for (const f of chosen) dt.items.add(f);
    input.files = dt.files;
  };
  const render = (): void => {
    list.innerHTML = '';
    chosen.forEach((f, i) => {
      const li = doc().createElement('li');
      const name = doc().createElement('bdi');
      name.textContent = f.name;
      name.setAttribute('class', 'file-name');
      const size = doc().createElement('span');
      size.setAttribute('class', 'muted small');
      size.textContent = ` ${sizeText(f.size)} `;
      const remove = doc().createElement('button');
      remove.type = 'button';
      remove.setAttribute('class', 'btn btn-sm');
      remove.setAttribute('aria-label', `Remove ${f.name}`);
      remove.textContent = 'Remove';
      remove.addEventListener('click', () => {
        chosen = chosen.filter((_, j) => j !== i);
        sync();
        render();
      });
      li.appendChild(name);
      li.appendChild(size);
      li.appendChild(remove);
      list.appendChild(li);
    });
    list.hidden = chosen.length === 0;
  };
  const add = (files: ArrayLike<FileLike>): void => {
    const refused: string[] = [];
    for (const f of Array.from(files)) {
      if (f.size > maxBytes) refused.push(`${f.name} is larger than ${sizeText(maxBytes)}.`);
      else if (chosen.length >= maxFiles) refused.push(`A paste holds at most ${maxFiles} files.`);
      else chosen = [...chosen.filter((c) => c.name !== f.name), f];
    }
    say(refused.join(' '));
    sync();
    render();
  };

  // The input's own choice joins the list rather than replacing it.
  const picked = (): FileLike[] => Array.from(input.files ?? []).filter((f) => !chosen.includes(f));
  input.addEventListener('change', () => add(picked()));
  form.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    form.setAttribute('data-dropping', '');
  });
  form.addEventListener('dragleave', () => form.removeAttribute('data-dropping'));
  form.addEventListener('drop', (ev) => {
    const files = (ev as unknown as DragEv).dataTransfer?.files;
    form.removeAttribute('data-dropping');
    if (files === undefined || files.length === 0) return;
    ev.preventDefault();
    add(Array.from(files));
  });
  // A pasted image becomes a file; pasted text goes where it always went.
  const page = doc() as unknown as { addEventListener(t: string, l: (ev: DragEv) => void): void };
  page.addEventListener('paste', (ev) => {
    const files = Array.from(ev.clipboardData?.files ?? []);
    if (files.length === 0) return;
    ev.preventDefault();
    const now = new Date();
    add(
      files.map((f) =>
        f.type.startsWith('image/') ? new web.File([f], screenshotName(now, f.type), { type: f.type }) : f,
      ),
    );
  });
  // Capture: before the encrypted pastes' own handler, which is left the form when it is ticked.
  (
    form as unknown as { addEventListener(t: string, l: (ev: DragEv) => void, capture: boolean): void }
  ).addEventListener(
    'submit',
    (ev) => {
      if (chosen.length === 0) return;
      // Encrypted, the files are the encrypted pastes' handler's to seal and send (encrypted-paste.ts).
      const encrypt = doc().getElementById('encrypt') as unknown as { checked: boolean } | null;
      if (encrypt?.checked === true || box.getAttribute('data-sealed-files') !== null) return;
      ev.preventDefault();
      send(form, progress, say);
    },
    true,
  );
}

/** Sends the form with its files, showing the upload's progress; then shows the answer as the browser would. */
function send(form: El, progress: El, say: (m: string) => void): void {
  const xhr = new web.XMLHttpRequest();
  const button = form.querySelector('button[type="submit"]');
  button?.setAttribute('disabled', '');
  progress.hidden = false;
  progress.removeAttribute('value');
  xhr.upload.onprogress = (e) => {
    if (e.lengthComputable) progress.setAttribute('value', String(Math.round((e.loaded / e.total) * 100)));
  };
  xhr.onload = () => {
    const action = new URL(form.action, loc().origin);
    const landed = new URL(xhr.responseURL || action.href);
    // Redirected to the paste: go there. Anything else (the form with its problems) is shown as it came.
    if (xhr.status < 300 && landed.pathname !== action.pathname) {
      web.location.assign(landed.href);
      return;
    }
    web.document.open();
    web.document.write(xhr.responseText);
    web.document.close();
  };
  xhr.onerror = () => {
    button?.removeAttribute('disabled');
    progress.hidden = true;
    say('The upload failed: the connection was lost. Nothing was created; try again.');
  };
  xhr.open('POST', form.action);
  xhr.send(new web.FormData(form));
}

whenReady(() => {
  const box = doc().querySelector('[data-files]');
  if (box !== null) armFiles(box);
});
