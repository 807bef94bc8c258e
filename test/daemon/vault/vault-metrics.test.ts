// daemon/vault/vault-metrics.ts on a real vault file: a wrong key and a corrupt file each count one
// svc_vault_decrypt_errors_total, which starts at zero, is declared by the vault, and is silent with
// metrics off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Vault } from '../../../daemon/vault/vault';
import { vaultMetrics } from '../../../daemon/vault/vault-metrics';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { sampleValue } from '../../helpers/metric-samples';

void test('a wrong key and a corrupt file each count a decrypt error; a good open counts none', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-vault-metrics-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'vault.json');
  const key = randomBytes(32);
  const metrics = createMetrics(true);
  const errors = vaultMetrics(metrics.registry);
  assert.equal(metrics.registry.owners().get('svc_vault_decrypt_errors_total'), 'vault');
  assert.equal(await sampleValue(metrics, 'svc_vault_decrypt_errors_total'), 0, 'zero before anything happens');

  const good = new Vault({ file, key, onDecryptError: errors.decryptError });
  good.open();
  good.set('providers', 'oai:main', 'sk-secret');
  assert.equal(good.open().state, 'ok');
  assert.equal(await sampleValue(metrics, 'svc_vault_decrypt_errors_total'), 0);

  assert.equal(new Vault({ file, key: randomBytes(32), onDecryptError: errors.decryptError }).open().state, 'locked');
  assert.equal(await sampleValue(metrics, 'svc_vault_decrypt_errors_total'), 1);
  writeFileSync(file, '{ not json');
  assert.equal(new Vault({ file, key, onDecryptError: errors.decryptError }).open().state, 'locked');
  assert.equal(await sampleValue(metrics, 'svc_vault_decrypt_errors_total'), 2);
});

void test('declared once: a second vault declaration in the same registry is refused; with metrics off nothing renders', async () => {
  const on = createMetrics(true);
  vaultMetrics(on.registry);
  assert.throws(() => vaultMetrics(on.registry), /svc_vault_decrypt_errors_total is already declared by vault/);
  const off = createMetrics(false);
  vaultMetrics(off.registry).decryptError();
  assert.equal(await off.render(), '');
});
