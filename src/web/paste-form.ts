import type { Fields } from '../http/fields.ts';
import { emptyFields } from '../http/fields.ts';
import type { Problem } from '../paste/validate.ts';
import { TITLE_MAX_CHARS } from '../paste/validate.ts';
import { field } from './context.ts';
import { checked, inputMaxLength, options } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { languageOptions } from './languages.ts';
import type { FileLimits } from '../config.ts';
import { HttpError } from '../http/errors.ts';
import type { Upload } from '../http/multipart.ts';
import { PasteError, type PasteFailure } from '../paste/errors.ts';
import type { NewFile } from '../paste/files.ts';
import { newFilesOf } from '../pipeline/uploads.ts';
import type { PasteFile } from '../paste/paste.ts';
import { clientUrl } from './client-asset.ts';
import { sizeLabel } from './size-label.ts';

export const PRIVACY_CHOICES = [
  ['public', 'Public'],
  ['unlisted', 'Unlisted'],
  ['private', 'Private'],
] as const;

export const EXPIRY_CHOICES = [
  ['never', 'Never'],
  ['10m', '10 minutes'],
  ['1h', '1 hour'],
  ['1d', '1 day'],
  ['1w', '1 week'],
  ['1m', '1 month'],
] as const;

/** The values a paste form shows: what was submitted, or a paste's current values. */
export interface PasteFormValues {
  title: string;
  content: string;
  language: string;
  privacy: string;
  expiry: string;
}

/**
 * The content as the person typed it (README, Web pages): browsers send a textarea's line
 * breaks as CRLF, which would turn a shell script into `$'\r': command not found`. Form
 * submissions get LF; API bodies stay byte for byte.
 */
export function typedText(fields: Fields): void {
  const c = fields['content'];
  if (typeof c === 'string' && c.includes('\r\n')) fields['content'] = c.replaceAll('\r\n', '\n');
}

/**
 * The form's submission in the shape the shared validators expect. A checkbox sends
 * nothing when unticked, and the validators' default for `highlight` is 1, so the flags
 * are spelled out here; other fields pass through only when present.
 */
export function formToFields(form: Fields, flags: readonly string[], keep: readonly string[]): Fields {
  const out = emptyFields();
  for (const name of keep) if (Object.hasOwn(form, name)) out[name] = field(form, name);
  // An unticked box sends nothing (0); any value other than the box's own `1` or `0` is the
  // validators' 400, as in the API (README, Create a paste), never quietly taken for 0.
  for (const name of flags) out[name] = Object.hasOwn(form, name) ? field(form, name) : '0';
  return out;
}

export const problemMessages = (problems: readonly Problem[]): string[] =>
  problems.map((p) => `${p.message.charAt(0).toUpperCase() + p.message.slice(1)}.`);

/**
 * Title, content, and the language / privacy / expiry selects shared by create and edit;
 * `extra` joins the selects' row (the password field).
 * The newline after `<textarea>` is eaten by the HTML parser, so content that itself starts
 * with a newline keeps it.
 */
export function pasteFields(
  v: PasteFormValues,
  expiryChoices: readonly (readonly [string, string])[],
  extra: SafeHtml,
  privacyChoices: readonly (readonly [string, string])[] = PRIVACY_CHOICES,
  textRequired = true,
): SafeHtml {
  return html`<div class="field"><label for="title">Title <span class="muted small">(optional)</span></label><input \
type="text" id="title" name="title" value="${v.title}" maxlength="${inputMaxLength(TITLE_MAX_CHARS)}" \
placeholder="Untitled paste"></div>
<div class="field"><label for="content">Content</label><textarea id="content" name="content" class="code-input" \
rows="14" spellcheck="false" autocapitalize="off"${textRequired ? html` required` : ''} placeholder="Paste your text \
or code here">
${v.content}</textarea></div>
<div class="grid">
<div class="field"><label for="language">Language</label><select id="language" \
name="language">${languageOptions(v.language)}</select></div>
<div class="field"><label for="privacy">Visibility</label><select id="privacy" \
name="privacy">${options(privacyChoices, v.privacy)}</select></div>
<div class="field"><label for="expiry">Expires</label><select id="expiry" \
name="expiry">${options(expiryChoices, v.expiry)}</select></div>
${extra}
</div>
<p class="hint">Public pastes are listed on the start page; unlisted ones only open with their link; private ones only \
for you.</p>`;
}

/** A checkbox that sends `name=1` when ticked. */
export const flagBox = (name: string, label: string, on: boolean): SafeHtml =>
  html`<label class="check"><input type="checkbox" name="${name}" value="1"${checked(on)}> ${label}</label>`;

/**
 * The form's files (README, Web pages): a plain file input that works without JavaScript;
 * the browser module (client/paste-files.ts) adds dropping, pasting a screenshot, the list
 * of chosen files and the upload's progress. Its limits are the server's, shown up front.
 */
export function filesField(limits: FileLimits, sealed = false): SafeHtml {
  return html`<div class="field files-field" data-files${sealed ? html` data-sealed-files hidden` : ''} \
data-module="${clientUrl()}" data-max-file-bytes="${limits.maxFileBytes}" data-max-files="${limits.maxFilesPerPaste}">
<label for="file">Files <span class="muted small">(optional: up to ${limits.maxFilesPerPaste}, \
${sizeLabel(limits.maxFileBytes)} each)</span></label>
<input type="file" id="file" name="file" multiple${sealed ? html` disabled` : ''}>
${sealed ? sealedFilesNote : ''}<p class="hint" data-files-hint hidden>Or drop files on the form, or paste a \
screenshot into it.</p>
<ul class="chosen-files" data-files-list hidden></ul>
<progress class="upload-progress" data-files-progress max="100" value="0" hidden></progress>
<div class="alert alert-error" data-files-status role="alert" hidden></div>
</div>`;
}

/**
 * An encrypted paste's edit form takes files only where the browser module can seal them
 * with the link's key (client/encrypted-paste.ts): hidden and disabled until then, so no
 * file is ever sent in the clear. The password field has no name: it is never sent.
 */
const sealedFilesNote = html`<div class="field"><label for="encrypt-password">Encryption password <span \
class="muted small">(if the paste has one)</span></label><input type="password" id="encrypt-password" \
autocomplete="off"></div>
<p class="hint">Files added here are encrypted in this browser with the key in the link, as the text was.</p>
<div id="encrypt-status" role="alert" hidden></div>
`;

/** An edit's current files, each with a box that removes it (`remove_file=NAME`). */
export function currentFiles(files: readonly PasteFile[], removing: readonly string[]): SafeHtml {
  if (files.length === 0) return html``;
  const rows = files.map(
    (f) =>
      html`<li><label class="check"><input type="checkbox" name="remove_file" \
value="${f.name}"${checked(removing.includes(f.name))}> Remove <bdi class="file-name">${f.name}</bdi> <span \
class="muted small">${sizeLabel(f.size)}</span></label></li>`,
  );
  return html`<fieldset class="current-files"><legend>Files of this paste</legend><ul \
class="chosen-files">${rows}</ul></fieldset>`;
}

/** The refusals of a paste's files a form shows beside its other problems, and their status. */
const FILE_REFUSALS: Partial<Record<PasteFailure, number>> = {
  too_many_files: 400,
  file_too_large: 413,
  file_name_taken: 400,
  no_such_file: 400,
  nothing_left: 400,
  quota_exceeded: 413,
};

/**
 * Runs a create or edit with the files a form brought (README, Files), the same checks as
 * the API's: a refusal of its files (a bad name, too many, past the quota) comes back as
 * the form's problem and status, any other error goes on.
 */
export async function withFormFiles<T>(
  uploads: readonly Upload[],
  run: (files: NewFile[]) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; problem: string; status: number }> {
  try {
    return { ok: true, value: await run(newFilesOf(uploads)) };
  } catch (err) {
    const status = err instanceof PasteError ? FILE_REFUSALS[err.kind] : undefined;
    if (status !== undefined) return { ok: false, problem: `${(err as Error).message}.`, status };
    if (err instanceof HttpError && err.code === 'bad_request') {
      const m = err.message;
      return { ok: false, problem: `${m.charAt(0).toUpperCase()}${m.slice(1)}.`, status: 400 };
    }
    throw err;
  }
}
