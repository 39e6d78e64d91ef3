import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExportLine } from '../../src/transfer/pastes.ts';

// An export carries no file's bytes yet (docs/files.md): an import must not keep a list of
// files whose bytes this server does not hold.
test('an import line that names files is taken without them', () => {
  const line = JSON.stringify({
    v: 1,
    hash: 'aB3dE5gH7j',
    title: 't',
    content: 'text',
    language: 'text',
    privacy: 'public',
    highlight: 1,
    burn_after_read: 0,
    burned: false,
    password: null,
    owner: 'alice',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    expire_at: null,
    view_count: 0,
    revision: 1,
    receipt: null,
    files: [{ name: 'a.txt', size: 1, type: 'text/plain', sha256: 'a'.repeat(64) }],
  });
  const { paste } = parseExportLine(line, 1_000_000);
  assert.equal(paste.files, undefined);
  assert.equal(paste.content_json, '"text"');
});
