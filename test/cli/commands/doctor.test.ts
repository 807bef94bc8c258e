// Pure helpers of svc doctor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeVersionOk, providerChecks } from '../../../cli/commands/doctor';

test('nodeVersionOk: 20.19.0 or newer', () => {
  for (const ok of ['v20.19.0', 'v20.20.2', 'v22.0.0', 'v24.1.0', '20.19.0']) assert.equal(nodeVersionOk(ok), true, ok);
  for (const old of ['v20.18.3', 'v18.20.0', 'v20.9.0', 'v19.99.99']) assert.equal(nodeVersionOk(old), false, old);
});

test('providerChecks: local and keyless entries pass; a keyed provider needs a key of its own id in the vault', () => {
  const chain = [
    { id: 'local', kind: 'local' as const },
    { id: 'ollama', kind: 'openai' as const, base_url: 'http://127.0.0.1:11434/v1', keyless: true },
    { id: 'openai', kind: 'openai' as const },
    { id: 'claude', kind: 'anthropic' as const },
  ];
  const checks = providerChecks(chain, ['openai:default', 'openai:backup', 'openaix:other']);
  assert.deepEqual(checks.map((c) => [c.name, c.ok]), [
    ['provider local', true],
    ['provider ollama', true],
    ['provider openai', true],
    ['provider claude', false],
  ]);
  assert.match(checks[2]!.detail, /2 keys/);
  assert.equal(checks[3]!.fix?.startsWith('svc key add claude'), true);
  assert.deepEqual(providerChecks([{ id: 'openaix', kind: 'openai' }], ['openai:default']).map((c) => c.ok), [false], 'a key of another provider whose id is a prefix does not count');
  assert.deepEqual(providerChecks(chain, null).map((c) => c.ok), [true, true, false, false], 'an unreadable vault fails the keyed providers');
});
