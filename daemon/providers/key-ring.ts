// Labelled API keys per provider, kept only in the vault (namespace `providers`, key
// `<provider_id>:<label>`; ARCHITECTURE.md Storage). The secret leaves this module only to the
// adapter that sends it; listings carry a fingerprint instead: the first 12 hex digits of
// SHA-256("svc-key-fingerprint:" + secret) — enough to tell two keys apart, nothing of the key's
// own characters (unlike the usual "last four", which leaks part of the secret).
import { createHash } from 'node:crypto';
import { KEY_LABEL_PATTERN } from '../../protocol/providers';

export const VAULT_NAMESPACE = 'providers';
const LABEL = new RegExp(KEY_LABEL_PATTERN);

/** The part of the Vault this module needs (daemon/vault/vault.ts). */
export interface SecretStore {
  get(namespace: string, key: string): string | undefined;
  set(namespace: string, key: string, value: string): void;
  delete(namespace: string, key: string): boolean;
  keys(namespace: string): string[];
}

export interface ProviderKey {
  provider: string;
  label: string;
  secret: string;
}

export const isValidLabel = (label: string): boolean => LABEL.test(label);

export function fingerprint(secret: string): string {
  return createHash('sha256').update(`svc-key-fingerprint:${secret}`).digest('hex').slice(0, 12);
}

export class KeyRing {
  constructor(private readonly vault: SecretStore) {}

  /** The provider's keys in label order (the order the chain tries them in). */
  keys(provider: string): ProviderKey[] {
    const prefix = `${provider}:`;
    return this.vault
      .keys(VAULT_NAMESPACE)
      .filter((k) => k.startsWith(prefix))
      .map((k) => ({ provider, label: k.slice(prefix.length), secret: this.vault.get(VAULT_NAMESPACE, k) ?? '' }))
      .filter((k) => k.secret !== '');
  }

  has(provider: string, label: string): boolean {
    return this.vault.get(VAULT_NAMESPACE, `${provider}:${label}`) !== undefined;
  }

  add(key: ProviderKey): void {
    this.vault.set(VAULT_NAMESPACE, `${key.provider}:${key.label}`, key.secret);
  }

  remove(provider: string, label: string): boolean {
    return this.vault.delete(VAULT_NAMESPACE, `${provider}:${label}`);
  }
}
