// Where the vault key comes from, in order: SVC_VAULT_KEY, the systemd credential `vault.key`
// ($CREDENTIALS_DIRECTORY, LoadCredential=), or $SVC_HOME/vault.key, created 0600 on first start.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write';

export class VaultKeyError extends Error {}

export type VaultKeySource = 'env' | 'credential' | 'file' | 'created';

/** Accepts 64 hex characters or base64 of exactly 32 bytes. */
export function parseVaultKey(text: string, origin: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  if (b.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(t)) return b;
  throw new VaultKeyError(`${origin}: a vault key is 32 bytes written as 64 hex characters or base64`);
}

export function loadVaultKey(opts: { home: string; envKey?: string | undefined; credentialsDir?: string | undefined }): { key: Buffer; source: VaultKeySource } {
  if (opts.envKey) return { key: parseVaultKey(opts.envKey, 'SVC_VAULT_KEY'), source: 'env' };
  if (opts.credentialsDir) {
    const cred = join(opts.credentialsDir, 'vault.key');
    if (existsSync(cred)) return { key: parseVaultKey(readFileSync(cred, 'utf8'), cred), source: 'credential' };
  }
  const file = join(opts.home, 'vault.key');
  if (existsSync(file)) return { key: parseVaultKey(readFileSync(file, 'utf8'), file), source: 'file' };
  const key = randomBytes(32);
  writeFileAtomic(file, `${key.toString('hex')}\n`, 0o600);
  return { key, source: 'created' };
}

/** Like loadVaultKey but never creates a key (svc doctor); null when there is none yet. */
export function loadVaultKeyReadOnly(opts: { home: string; envKey?: string | undefined; credentialsDir?: string | undefined }): { key: Buffer; source: VaultKeySource } | null {
  if (!opts.envKey && !(opts.credentialsDir && existsSync(join(opts.credentialsDir, 'vault.key'))) && !existsSync(join(opts.home, 'vault.key'))) return null;
  return loadVaultKey(opts);
}
