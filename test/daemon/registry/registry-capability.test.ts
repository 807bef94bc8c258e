// The registry capability in an in-process brain: off by default (no /registry/v1, /api/daemons still
// there), on with settings registry.enabled (the API answers, reviews take the brain's API token), and
// the limits that follow from the settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { registryCapability, registryLimits, RegistrySettings } from '../../../daemon/registry/registry-capability';
import { inProcessBrain } from '../../helpers/assembled-brain';

void test('off by default: no registry routes, but the brain\'s installed daemons answer', async (t) => {
  const { brain, token } = await inProcessBrain(t, { capabilities: [registryCapability] });
  assert.equal((await brain.app.inject({ url: '/registry/v1/items' })).statusCode, 404);
  const daemons = await brain.app.inject({ url: '/api/daemons', headers: { authorization: `Bearer ${token}` } });
  assert.equal(daemons.statusCode, 200);
  assert.deepEqual(daemons.json(), { daemons: [] });
  assert.equal((await brain.app.inject({ url: '/api/daemons' })).statusCode, 401);
});

void test('enabled: the registry answers publicly, and its review queue takes the brain\'s API token', async (t) => {
  const { brain, token } = await inProcessBrain(t, { capabilities: [registryCapability], file: { registry: { enabled: true } } });
  assert.deepEqual((await brain.app.inject({ url: '/registry/v1/items' })).json(), { items: [] });
  assert.equal((await brain.app.inject({ url: '/registry/v1/review' })).statusCode, 401);
  assert.deepEqual((await brain.app.inject({ url: '/registry/v1/review', headers: { authorization: `Bearer ${token}` } })).json(), { submissions: [] });
});

void test('the limits follow the settings: the publish body holds the archive in base64', () => {
  const defaults = Value.Default(RegistrySettings, {}) as RegistrySettings;
  assert.equal(defaults.enabled, false);
  const limits = registryLimits({ ...defaults, max_archive_bytes: 3 * 1024 * 1024 });
  assert.equal(limits.archive.maxTotalBytes, 3 * 1024 * 1024);
  assert.ok(limits.publishBodyLimit >= Math.ceil((3 * 1024 * 1024 * 4) / 3));
});
