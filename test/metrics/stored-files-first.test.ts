import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerMetrics } from '../../src/observe.ts';
import { until } from '../helpers/until.ts';

// docs/metrics.md: the stored files are counted a second after start, so a first scrape has the
// gauges; before, nothing counted them until a scrape asked, and that scrape answered none.
test('the stored files are counted a second after start, before any scrape', async () => {
  const metrics = new ServerMetrics();
  let asked = 0;
  metrics.attach({
    pastes: () => ({ created: 0, burned: 0, deleted: 0 }),
    log: () => ({ written: 0, dropped: 0, unwritten: 0, unlogged: 0 }),
    parts: () => ({ counts: {}, bytes: 0 }),
    storedFiles: async () => {
      asked++;
      return { files: 3, bytes: 4567 };
    },
  });
  try {
    await until(() => asked > 0, { what: 'a count of the stored files without a scrape', timeoutMs: 5_000 });
    // One turn for the count's answer to be kept.
    await new Promise((done) => setImmediate(done));
    const text = metrics.registry.expose();
    assert.match(text, /^paste_files_stored 3$/m);
    assert.match(text, /^paste_file_bytes_stored 4567$/m);
  } finally {
    metrics.stop();
  }
});
