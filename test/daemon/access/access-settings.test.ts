// The access section of settings.json: its defaults, and persistAccess writing mode and remote
// atomically while keeping every other key, refusing a file that is not a JSON object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { AccessSettings, persistAccess } from '../../../daemon/access/access-settings';
import { AppError } from '../../../daemon/kernel/errors';

function home(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-access-settings-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

void test('defaults: localhost, no tunnel, addresses read every 30 s; unknown keys refused', () => {
  assert.deepEqual(Value.Default(AccessSettings, {}), { mode: 'localhost', remote: false, address_poll_seconds: 30 });
  assert.ok(!Value.Check(AccessSettings, { mode: 'remote', remote: false, address_poll_seconds: 30 }), 'remote is a flag, not a listener mode');
  assert.ok(!Value.Check(AccessSettings, { mode: 'lan', remote: false, address_poll_seconds: 30, host: '0.0.0.0' }));
});

void test('persistAccess creates the file (0600) or keeps everything else in it', (t) => {
  const file = join(home(t), 'settings.json');
  persistAccess(file, { mode: 'lan', remote: false });
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { access: { mode: 'lan', remote: false } });
  assert.equal(statSync(file).mode & 0o777, 0o600);
  writeFileSync(file, JSON.stringify({ version: 1, server: { port: 9191 }, access: { address_poll_seconds: 0, mode: 'lan' } }));
  persistAccess(file, { mode: 'localhost', remote: true });
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { version: 1, server: { port: 9191 }, access: { address_poll_seconds: 0, mode: 'localhost', remote: true } });
});

void test('a file that is not a JSON object is a 409 and is left untouched', (t) => {
  const file = join(home(t), 'settings.json');
  for (const text of ['{"access": ', '[]', 'null']) {
    writeFileSync(file, text);
    assert.throws(() => persistAccess(file, { mode: 'lan', remote: false }), (err: unknown) => err instanceof AppError && err.status === 409 && /not a JSON object/.test(err.message));
    assert.equal(readFileSync(file, 'utf8'), text);
  }
});
