// Pure helpers of svc status / svc doctor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUptime } from '../../cli/commands/brain';
import { nodeVersionOk } from '../../cli/commands/doctor';

test('formatUptime drops zero units above seconds', () => {
  assert.equal(formatUptime(0), '0s');
  assert.equal(formatUptime(59.9), '59s');
  assert.equal(formatUptime(61), '1m 1s');
  assert.equal(formatUptime(3600), '1h 0s');
  assert.equal(formatUptime(90061), '1d 1h 1m 1s');
});

test('nodeVersionOk: 20.19.0 or newer', () => {
  for (const ok of ['v20.19.0', 'v20.20.2', 'v22.0.0', 'v24.1.0', '20.19.0']) assert.equal(nodeVersionOk(ok), true, ok);
  for (const old of ['v20.18.3', 'v18.20.0', 'v20.9.0', 'v19.99.99']) assert.equal(nodeVersionOk(old), false, old);
});
