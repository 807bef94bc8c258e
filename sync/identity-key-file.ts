// The brain's sync keypair in $SVC_HOME/sync-key (0600), made on first use and never changed: peers
// pinned its public key at pairing, so a new key means pairing again. The file holds one JSON object
// {v: 1, brain_id, public_key, private_key}, the keys raw 32-byte base64url: the key is bound to the
// brain id it was made for, and a copy in another brain's home is refused rather than shared. Creation
// is exclusive (a hard link of a fully written temp file, as mesh/brain-id.ts does), so racing
// creators agree on one key and a crash never leaves a torn file.
import { join } from 'node:path';
import { createOnce, readIfExists } from '../mesh/create-once';
import { generateKeypair, identityOf, SyncKeyError, type RawKeypair, type SyncIdentity } from './identity-keys';

export const SYNC_KEY_FILE = 'sync-key';

/** This brain's sync identity: `brainId` with the keypair of `<home>/sync-key`, created when missing. */
export function loadSyncIdentity(home: string, brainId: string): SyncIdentity {
  const file = join(home, SYNC_KEY_FILE);
  const existing = readKeypair(file, brainId);
  if (existing !== undefined) return identityOf(brainId, existing);
  const pair = generateKeypair();
  createOnce(file, `${JSON.stringify({ v: 1, brain_id: brainId, public_key: pair.publicKey, private_key: pair.privateKey })}\n`);
  const kept = readKeypair(file, brainId);
  if (kept === undefined) throw new SyncKeyError(`${file} vanished while it was being created`);
  return identityOf(brainId, kept);
}

/** This brain's sync public key when `<home>/sync-key` exists (nothing is created), for the pair URL of kind brain. */
export function readSyncPublicKey(home: string, brainId: string): string | undefined {
  return readKeypair(join(home, SYNC_KEY_FILE), brainId)?.publicKey;
}

function readKeypair(file: string, brainId: string): RawKeypair | undefined {
  const text = readIfExists(file);
  if (text === undefined) return undefined;
  const damaged = (): SyncKeyError =>
    new SyncKeyError(`${file} does not hold a sync keypair; peers know this brain by it: restore it from a backup, or delete it and pair every peer again`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) throw damaged();
    throw err;
  }
  if (value === null || typeof value !== 'object') throw damaged();
  const { v, brain_id: owner, public_key: publicKey, private_key: privateKey } = value as Record<string, unknown>;
  if (v !== 1 || typeof owner !== 'string' || typeof publicKey !== 'string' || typeof privateKey !== 'string') throw damaged();
  if (owner !== brainId) throw new SyncKeyError(`${file} is the sync key of brain ${owner}, not of this brain (${brainId}): a home copied from another brain? Delete it and pair every peer again`);
  return { publicKey, privateKey };
}
