// The vault's metric (spec 4.12), declared where the vault is wired (daemon/brain.ts hands
// decryptError to the Vault as its onDecryptError). A brain started with the wrong key counts its
// failure before it listens, so the first scrape already reads 1 (docs/metrics.md, VaultDecryptFailed).
import type { MetricsRegistry } from '../kernel/metrics';

export interface VaultMetrics {
  /** vault.json could not be decrypted: a wrong key or a corrupt file (handed to the Vault as is). */
  readonly decryptError: () => void;
}

/** Declares svc_vault_decrypt_errors_total under the owner `vault`. */
export function vaultMetrics(registry: MetricsRegistry): VaultMetrics {
  const errors = registry.counter('vault', { name: 'svc_vault_decrypt_errors_total', help: 'Vault decryption failures (wrong key or corrupt file)' });
  return { decryptError: () => errors.inc() };
}
