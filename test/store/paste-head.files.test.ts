import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeContent } from '../../src/paste/paste.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { WHOLE_FILE_BYTES } from '../../src/store/paste-head.ts';
import { fileText } from '../../src/store/paste-record.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { pasteRecord } from '../helpers/paste-record.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

/** Lines as the paste page counts them: a final newline ends the last line, it starts none. */
const linesOf = (s: string): number => (s === '' ? 0 : s.split('\n').length - (s.endsWith('\n') ? 1 : 0));

test('the head of a long paste file: its beginning, the size of the whole counted a slice at a time, one object per version', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    // No cache: every read goes to the file.
    const store = new PasteStore(dir, files, 0);
    await store.init();
    // Escapes and characters of several bytes on each side of the first slice's end.
    const around = 'h\u00e9\\"\n\u0001\u{1F600}'.repeat(40_000);
    const endings = ['', '\n', 'tab\t\\n"\n', '\u{1F600}'];
    for (const [i, ending] of endings.entries()) {
      const text = `${'a'.repeat(WHOLE_FILE_BYTES - 100_000)}${around}${ending}`;
      const hash = `${String(i).padStart(6, '0')}Head`;
      await store.create(() => pasteRecord(hash, { content_json: encodeContent(text) }));
      const head = await store.head(hash, 10);
      assert.deepEqual(head?.size, { bytes: Buffer.byteLength(text), lines: linesOf(text) }, JSON.stringify(ending));
      assert.equal(head?.paste.content_json, encodeContent(text.slice(0, 10)));
      assert.equal((await store.head(hash, 10))?.paste, head?.paste, 'one object per version, for the page caches');
    }
    // A short file is read whole; a long one laid out otherwise (its text first) too.
    await store.create(() => pasteRecord('000100Shrt', { content_json: encodeContent('short\n') }));
    assert.deepEqual(await store.head('000100Shrt', 3), { paste: await store.get('000100Shrt') });
    const odd = pasteRecord('000101OddL', { content_json: encodeContent('b'.repeat(WHOLE_FILE_BYTES)) });
    const text = fileText(odd);
    await writeFile(
      join(dir, 'pastes', '00', '000101.json'),
      `{"content":${odd.content_json},${text.slice(1, text.indexOf(',"content":'))}}`,
    );
    const whole = await store.head('000101OddL', 3);
    assert.equal(whole?.size, undefined);
    assert.equal(whole?.paste.content_json, odd.content_json);
    assert.equal(await store.head('000102None', 3), null);
  } finally {
    await cleanup(dir);
  }
});
