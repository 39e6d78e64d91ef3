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

// What every backend's head does is test/contract/paste-repository.ts; here, a file laid out otherwise.
test('the head of a long paste file laid out otherwise (its text first) is the whole paste', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    // No cache: every read goes to the file.
    const store = new PasteStore(dir, files, 0);
    await store.init();
    const odd = pasteRecord('000101OddL', { content_json: encodeContent('b'.repeat(WHOLE_FILE_BYTES)) });
    await store.create(() => odd);
    const text = fileText(odd);
    await writeFile(
      join(dir, 'pastes', '00', '000101.json'),
      `{"content":${odd.content_json},${text.slice(1, text.indexOf(',"content":'))}}`,
    );
    const whole = await store.head('000101OddL', 3);
    assert.equal(whole?.size, undefined);
    assert.equal(whole?.paste.content_json, odd.content_json);
  } finally {
    await cleanup(dir);
  }
});
