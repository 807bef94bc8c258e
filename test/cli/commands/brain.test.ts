// Pure helpers of svc status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUptime } from '../../../cli/commands/brain';

test('formatUptime drops zero units above seconds', () => {
  assert.equal(formatUptime(0), '0s');
  assert.equal(formatUptime(59.9), '59s');
  assert.equal(formatUptime(61), '1m 1s');
  assert.equal(formatUptime(3600), '1h 0s');
  assert.equal(formatUptime(90061), '1d 1h 1m 1s');
});
