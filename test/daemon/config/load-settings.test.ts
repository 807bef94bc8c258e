// settings.json: defaults from the schema, unknown keys refused, and every problem reported at once
// with its JSON path (the brain prints them and exits 78; test/e2e/config.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { loadSettings, parseSettings, SettingsError } from '../../../daemon/config/load-settings';
import { UNSUPPORTED_SECTIONS } from '../../../daemon/config/unsupported-settings';

function problems(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SettingsError, String(err));
    return err.problems;
  }
  assert.fail('expected a SettingsError');
}

function dir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-settings-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

test('an empty object gets every documented default, frozen', () => {
  const s = parseSettings({});
  assert.deepEqual(s.server, { host: '127.0.0.1', port: 9090, body_limit_bytes: 1024 * 1024, shutdown_timeout_ms: 5000, request_timeout_ms: 30_000, headers_timeout_ms: 10_000 });
  assert.deepEqual(s.log, { level: 'info' });
  assert.deepEqual(s.metrics, { endpoint: true, public: false });
  assert.deepEqual(s.storage, { synchronous: 'FULL', group_commit: true });
  assert.ok(Object.isFrozen(s));
});

test('given values are kept and the rest of a section is defaulted', () => {
  const s = parseSettings({ server: { port: 8081 }, storage: { synchronous: 'NORMAL' } });
  assert.equal(s.server.port, 8081);
  assert.equal(s.server.host, '127.0.0.1');
  assert.deepEqual(s.storage, { synchronous: 'NORMAL', group_commit: true });
});

test('unknown keys are refused at every level, so a typo is reported instead of ignored', () => {
  assert.deepEqual(problems(() => parseSettings({ sever: { port: 1 } })), ['/sever: Unexpected property']);
  assert.deepEqual(problems(() => parseSettings({ server: { prot: 1 } })), ['/server/prot: Unexpected property']);
  assert.deepEqual(problems(() => parseSettings({ memory: { decay: { halflife_days: 3 } } })), ['/memory/decay/halflife_days: Unexpected property']);
});

test('every error is listed, each with its JSON path, in one SettingsError', () => {
  const found = problems(() =>
    parseSettings({ bogus: 1, server: { port: 'x', host: 5, shutdown_timeout_ms: 1 }, log: { level: 'loud' }, metrics: 'on', agent: { router: { enabled: 'yes' } } }),
  );
  const paths = found.map((p) => p.slice(0, p.indexOf(':'))).sort();
  assert.deepEqual(paths, ['/bogus', '/log/level', '/metrics', '/server/host', '/server/port', '/server/shutdown_timeout_ms', '/agent/router/enabled'].sort());
  const err = (() => {
    try {
      parseSettings({ server: { port: 70000 } }, '/home/pi/.svc/settings.json');
    } catch (e) {
      return e as SettingsError;
    }
    return null;
  })();
  assert.equal(err?.message, '/home/pi/.svc/settings.json is invalid:\n  - /server/port: Expected integer to be less or equal to 65535');
});

test('a section of a feature this version does not have is refused with its own message, next to the other problems', () => {
  assert.deepEqual(problems(() => parseSettings({ webhooks: { allowed_ips: [] } })), ['/webhooks: this version of svc has no webhook intake; remove the section']);
  for (const key of Object.keys(UNSUPPORTED_SECTIONS)) {
    const found = problems(() => parseSettings({ [key]: {} }));
    assert.equal(found.length, 1, key);
    assert.match(found[0]!, new RegExp(`^/${key}: this version of svc has no .+; remove the section$`), key);
  }
  const mixed = problems(() => parseSettings({ update: { check: true }, server: { port: 'x' }, channels: { push: {} } }));
  assert.deepEqual(mixed.map((p) => p.slice(0, p.indexOf(':'))), ['/update', '/channels', '/server/port']);
});

test('property: exactly one problem per unsupported section, whatever it holds; the supported sections still load', () => {
  const keys = Object.keys(UNSUPPORTED_SECTIONS);
  fc.assert(
    fc.property(fc.subarray(keys), fc.jsonValue(), fc.integer({ min: 0, max: 65535 }), (chosen, value, port) => {
      const raw = { server: { port }, ...Object.fromEntries(chosen.map((k) => [k, value])) };
      if (chosen.length === 0) return assert.equal(parseSettings(raw).server.port, port);
      assert.deepEqual(problems(() => parseSettings(raw)).map((p) => p.slice(1, p.indexOf(':'))), chosen);
    }),
  );
});

test('loadSettings: a missing file means defaults; invalid JSON and non-objects are SettingsErrors at /', (t) => {
  const d = dir(t);
  const file = join(d, 'settings.json');
  assert.deepEqual(loadSettings(file), parseSettings({}));
  writeFileSync(file, '{"server": {"port": 1,}}');
  assert.match(problems(() => loadSettings(file))[0]!, /^\/: not valid JSON \(/);
  for (const text of ['[]', 'null', '"x"', '3']) {
    writeFileSync(file, text);
    assert.deepEqual(problems(() => loadSettings(file)), ['/: must be a JSON object'], text);
  }
  writeFileSync(file, JSON.stringify({ $schema: './settings.schema.json', log: { level: 'warn' } }));
  assert.equal(loadSettings(file).log.level, 'warn');
});
