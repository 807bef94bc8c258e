// The brain's sync keypair in $SVC_HOME/sync-key (0600), made on first use and never changed: peers
// pinned its public key at pairing, so a new key means pairing again. The file holds one JSON object
// {v: 1, public_key, private_key}, both raw 32-byte base64url. Creation is exclusive (a hard link of a
// fully written temp file, as mesh/brain-id.ts does), so racing creators agree on one key and a crash
// never leaves a torn file.
import { randomUUID } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeypair, identityOf, SyncKeyError, type RawKeypair, type SyncIdentity } from './identity-keys';

export const SYNC_KEY_FILE = 'sync-key';

/** This brain's sync identity: `brainId` with the keypair of `<home>/sync-key`, created when missing. */
export function loadSyncIdentity(home: string, brainId: string): SyncIdentity {
  const file = join(home, SYNC_KEY_FILE);
  const existing = readKeypair(file);
  if (existing !== undefined) return identityOf(brainId, existing);
  const pair = generateKeypair();
  const tmp = join(home, `.${SYNC_KEY_FILE}.${process.pid}.${randomUUID()}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, `${JSON.stringify({ v: 1, public_key: pair.publicKey, private_key: pair.privateKey })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const kept = readKeypair(file);
  if (kept === undefined) throw new SyncKeyError(`${file} vanished while it was being created`);
  return identityOf(brainId, kept);
}

function readKeypair(file: string): RawKeypair | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const damaged = (): SyncKeyError =>
    new SyncKeyError(`${file} does not hold a sync keypair; peers know this brain by it: restore it from a backup, or delete it and pair every peer again (svc sync pair)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) throw damaged();
    throw err;
  }
  if (value === null || typeof value !== 'object') throw damaged();
  const { v, public_key: publicKey, private_key: privateKey } = value as Record<string, unknown>;
  if (v !== 1 || typeof publicKey !== 'string' || typeof privateKey !== 'string') throw damaged();
  return { publicKey, privateKey };
}
