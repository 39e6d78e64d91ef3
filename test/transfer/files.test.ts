import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportLine, parseExportLine } from '../../src/transfer/pastes.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

// An export carries each file's bytes on a `file` line before the paste (docs/files.md): the
// line's list is read as it is, and the import refuses a paste whose bytes no earlier line
// carried (test/transfer.test.ts, "export and import of files"), so no list names bytes not held.
test('an import line that names files keeps them; two files of one name are refused', () => {
  const files = [{ name: 'a.txt', size: 1, type: 'text/plain', sha256: 'a'.repeat(64) }];
  const line = JSON.stringify({ ...JSON.parse(exportLine(pasteRecord('aB3dE5gH7j'), 'alice', 0)), files });
  const { paste } = parseExportLine(line, 1_000_000);
  assert.deepEqual(paste.files, files);
  assert.equal(paste.content_json, '"text"');
  const twice = JSON.stringify({ ...JSON.parse(line), files: [...files, ...files] });
  assert.throws(() => parseExportLine(twice, 1_000_000), /two files of one paste share a name/);
});
