import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportLine, parseExportLine } from '../../src/transfer/pastes.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

// An export carries no file's bytes yet (docs/files.md): an import must not keep a list of
// files whose bytes this server does not hold.
test('an import line that names files is taken without them', () => {
  const files = [{ name: 'a.txt', size: 1, type: 'text/plain', sha256: 'a'.repeat(64) }];
  const line = JSON.stringify({ ...JSON.parse(exportLine(pasteRecord('aB3dE5gH7j'), 'alice', 0)), files });
  const { paste } = parseExportLine(line, 1_000_000);
  assert.equal(paste.files, undefined);
  assert.equal(paste.content_json, '"text"');
});
