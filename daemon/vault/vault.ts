// The vault: one AES-256-GCM encrypted file holding every secret, grouped in namespaces
// (publisher_keys, providers, webhooks, oauth, push, ...). Secrets leave it only to the code that
// uses them — never to logs, API responses, prompts or sync ops.
//
// A wrong key or a corrupt file puts the vault in the `locked` state: reads and writes fail with
// VAULT_LOCKED, svc_vault_decrypt_errors_total counts the failure, and the file is never overwritten,
// so fixing the key recovers every secret.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AppError } from '../kernel/errors';
import { writeFileAtomic } from '../fs/atomic-write';

const AAD = Buffer.from('svc-vault-v1');

interface VaultFile {
  format: 'svc-vault';
  version: 1;
  alg: 'aes-256-gcm';
  iv: string;
  tag: string;
  data: string;
}

type Contents = Record<string, Record<string, string>>;

export type VaultStatus = { state: 'ok'; namespaces: number } | { state: 'locked'; reason: string };

export interface VaultDeps {
  file: string;
  key: Buffer;
  onDecryptError: () => void;
}

export class Vault {
  private contents: Contents | null = null;
  private lockedReason: string | null = null;
  private changes = 0;

  constructor(private readonly deps: VaultDeps) {
    if (deps.key.length !== 32) throw new Error('vault key must be 32 bytes');
  }

  /** Reads and decrypts the file. A missing file is an empty vault; a bad one locks the vault. */
  open(): VaultStatus {
    this.changes++;
    let text: string;
    try {
      text = readFileSync(this.deps.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.contents = {};
      this.lockedReason = null;
      return this.status();
    }
    try {
      this.contents = this.decrypt(text);
      this.lockedReason = null;
    } catch (err) {
      this.contents = null;
      this.lockedReason = (err as Error).message;
      this.deps.onDecryptError();
    }
    return this.status();
  }

  private decrypt(text: string): Contents {
    let file: VaultFile;
    try {
      file = JSON.parse(text) as VaultFile;
    } catch {
      throw new Error('vault file is corrupt (not JSON)');
    }
    if (file.format !== 'svc-vault' || file.version !== 1 || file.alg !== 'aes-256-gcm') throw new Error('vault file has an unknown format');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.deps.key, Buffer.from(file.iv, 'base64'));
      decipher.setAAD(AAD);
      decipher.setAuthTag(Buffer.from(file.tag, 'base64'));
      const plain = Buffer.concat([decipher.update(Buffer.from(file.data, 'base64')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as Contents;
    } catch {
      throw new Error('vault could not be decrypted: wrong key or corrupt file');
    }
  }

  private persist(contents: Contents): void {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.deps.key, iv);
    cipher.setAAD(AAD);
    const data = Buffer.concat([cipher.update(JSON.stringify(contents), 'utf8'), cipher.final()]);
    const file: VaultFile = {
      format: 'svc-vault',
      version: 1,
      alg: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
    writeFileAtomic(this.deps.file, JSON.stringify(file), 0o600);
  }

  private unlocked(): Contents {
    if (this.contents === null) {
      throw new AppError('VAULT_LOCKED', `vault is locked: ${this.lockedReason ?? 'not opened'}`, null, 503);
    }
    return this.contents;
  }

  /** Moves on every open, set and delete: the secret scrubber rebuilds its patterns only then. */
  revision(): number {
    return this.changes;
  }

  status(): VaultStatus {
    return this.contents === null
      ? { state: 'locked', reason: this.lockedReason ?? 'not opened' }
      : { state: 'ok', namespaces: Object.keys(this.contents).length };
  }

  get(namespace: string, key: string): string | undefined {
    return this.unlocked()[namespace]?.[key];
  }

  /** Namespaces that hold at least one secret, sorted. */
  namespaces(): string[] {
    return Object.keys(this.unlocked()).sort();
  }

  /** Key names only; values never leave through listings. */
  keys(namespace: string): string[] {
    return Object.keys(this.unlocked()[namespace] ?? {}).sort();
  }

  set(namespace: string, key: string, value: string): void {
    const next = structuredClone(this.unlocked());
    (next[namespace] ??= {})[key] = value;
    this.persist(next);
    this.contents = next;
    this.changes++;
  }

  delete(namespace: string, key: string): boolean {
    const current = this.unlocked();
    if (current[namespace]?.[key] === undefined) return false;
    const next = structuredClone(current);
    delete next[namespace]![key];
    if (Object.keys(next[namespace]!).length === 0) delete next[namespace];
    this.persist(next);
    this.contents = next;
    this.changes++;
    return true;
  }
}
