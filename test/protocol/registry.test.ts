// The registry's wire contract: what a daemon manifest and a publish body accept and refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { DaemonInstallBody, DaemonManifest, PublishBody, VERSION_STATES } from '../../protocol/registry';

void test('a daemon manifest: node_id, a semver version and a relative entry; brand.name is optional display', () => {
  assert.ok(Value.Check(DaemonManifest, { node_id: 'garden-pump', version: '1.2.3', entry: 'bin/run.js' }));
  assert.ok(Value.Check(DaemonManifest, { node_id: 'garden-pump', version: '1.2.3-rc.1', entry: 'run.js', brand: { name: 'Pump' } }));
  for (const entry of ['../run.js', '/abs/run.js', '.hidden.js', 'a//b.js']) assert.equal(Value.Check(DaemonManifest, { node_id: 'n', version: '1.0.0', entry }), false, entry);
  assert.equal(Value.Check(DaemonManifest, { node_id: 'n', version: 'one', entry: 'run.js' }), false);
  assert.equal(Value.Check(DaemonManifest, { version: '1.0.0', entry: 'run.js' }), false);
});

void test('a publish body names its kind, the archive, a detached signature and the public key, and nothing else', () => {
  const body = { kind: 'skill', archive: 'AAAA', signature: { alg: 'ed25519', sha256: 'a'.repeat(64), key_id: 'k1', sig: `${'A'.repeat(86)}==` }, public_key: `${'A'.repeat(43)}=` };
  assert.ok(Value.Check(PublishBody, body));
  assert.equal(Value.Check(PublishBody, { ...body, kind: 'app' }), false);
  assert.equal(Value.Check(PublishBody, { ...body, extra: 1 }), false);
  assert.ok(Value.Check(DaemonInstallBody, { url: 'http://127.0.0.1/x', sha256: body.signature.sha256, signature: body.signature }));
  assert.deepEqual([...VERSION_STATES], ['submitted', 'published', 'superseded', 'rejected', 'withdrawn']);
});
