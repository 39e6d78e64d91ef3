import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { smallDisk } from '../helpers/full-disk.ts';
import { events, makeToken, req, spawnServer, type ProcessServer } from '../helpers/server.ts';
import { apiLogLines } from '../helpers/stored.ts';
import { until } from '../helpers/until.ts';

/**
 * A full disk, against a server in its own process: writes answer 507 and change nothing,
 * leave no temp file, reads go on, writes work again once there is space, and SIGTERM
 * still ends cleanly, saying what it could not save, with no torn line in the log.
 */
test('a full disk: 507 and nothing changed, reads go on, writes recover, and a clean stop says what was lost', async () => {
  const disk = await smallDisk(4);
  let started: ProcessServer | undefined;
  try {
    const server = (started = await spawnServer({ dataDir: disk.dir, env: disk.env }));
    const token = await makeToken(disk.dir);
    const create = (content: string) => req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content } });
    const kept = String((await create('written before the disk filled')).json['hash']);
    for (let i = 0; i < 20; i++) await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token });
    // The log is written at least once a second: let these lines reach the disk first.
    await until(async () => (await apiLogLines(disk.dir)).length >= 21, { what: 'the API log lines on disk' });
    const told = (pattern: RegExp): number => events(server.output()).filter((e) => pattern.test(e.message)).length;
    const cannotWrite = /^api log: cannot write to/;

    await disk.fill();
    for (let i = 0; i < 5; i++) {
      const refused = await create(`refused ${i} ${'x'.repeat(5000)}`);
      assert.equal(refused.status, 507, `${disk.kind}: ${refused.text}`);
      assert.equal(refused.json['code'], 'storage_full');
      assert.match(String(refused.json.error), /disk is full/);
    }
    // The owner's list, whose line goes first, took each refused paste's line back.
    const live = new Set<string>();
    for (const line of (await readFile(join(disk.dir, 'owners', '1.log'), 'utf8')).split('\n')) {
      if (line.startsWith('+')) live.add(line.slice(1));
      else if (line.startsWith('-')) live.delete(line.slice(1));
    }
    assert.deepEqual([...live], [kept]);
    const edit = await req(server, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash: kept, content: 'changed' },
    });
    assert.equal(edit.status, 507);
    assert.deepEqual(await readdir(join(disk.dir, 'tmp')), [], 'no temp file is left behind');
    const read = await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token });
    assert.equal(read.status, 200);
    assert.equal(read.text, 'written before the disk filled', 'the refused edit changed nothing');

    await disk.free();
    const again = await create('written after space came back');
    assert.equal(again.status, 200);
    assert.equal(
      (await req(server, 'GET', `/api/v1/raw.php?hash=${String(again.json['hash'])}`, { token })).text,
      'written after space came back',
    );

    // Full again when the server is told to stop: it still stops cleanly, and says what it could not save.
    for (let i = 0; i < 30; i++) await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token });
    // The log writes again (if the first fill stopped it) before the disk fills once more.
    await until(() => told(cannotWrite) === told(/^api log: writing again/), { what: 'the API log to write again' });
    const failedWrites = told(cannotWrite);
    await disk.fill();
    // A log write meets the full disk before the stop (a torn line would be left here).
    for (let i = 0; i < 30; i++) await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token });
    await until(() => told(cannotWrite) > failedWrites, { what: 'a log write to meet the full disk' });
    const code = await server.stop('SIGTERM');
    const out = server.output();
    assert.equal(code, 0, out);
    assert.match(out, /shutdown complete/);
    const said = events(out);
    const warnings = said.filter((e) => e.level === 'warn').map((e) => e.message);
    assert.ok(
      warnings.some((w) => /^could not save the pending view counts: the disk is full/.test(w)),
      out,
    );
    assert.ok(
      warnings.some((w) => /^\d+ API log lines could not be written/.test(w)),
      out,
    );
    assert.ok(
      said.every((e) => e['stack'] === undefined),
      'no fault, no stack',
    );
    assert.equal(out.match(/storage: the disk is full/g)?.length ?? 0, 1, 'the refusals were reported once');

    // Every line of the API log is whole.
    const logs = join(disk.dir, 'logs');
    let lines = 0;
    for (const f of await readdir(logs)) {
      for (const line of (await readFile(join(logs, f), 'utf8')).split('\n').filter(Boolean)) {
        JSON.parse(line);
        lines++;
      }
    }
    assert.ok(lines > 0);
  } finally {
    // A failed assertion must not leave the server running (it would hold the test run open).
    await started?.stop('SIGKILL');
    await disk.remove();
  }
});
