// The brain's stable id (docs/mesh.md, "Brain id"): a random UUID kept in $SVC_HOME/brain-id (0600),
// made on first use and never changed, so peers, paired devices and the mDNS TXT record name the same
// brain across restarts, address changes and renames. Not a secret: it is advertised on the LAN.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createOnce, readIfExists } from './create-once';

export const BRAIN_ID_FILE = 'brain-id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export class BrainIdError extends Error {}

/** Whether `value` is a brain id (a lower-case version 4 UUID). */
export const isBrainId = (value: string): boolean => UUID.test(value);

/**
 * The id in `<home>/brain-id`, created when missing. Creation is exclusive (a hard link of a fully
 * written temp file, which fails when the name exists), so two callers racing on a new home agree on
 * one id and a crash never leaves a torn file. A file holding something else is an error, never
 * replaced: devices and peers know the brain by it.
 */
export function loadBrainId(home: string): string {
  const file = join(home, BRAIN_ID_FILE);
  const existing = readId(file);
  if (existing !== undefined) return existing;
  createOnce(file, `${randomUUID()}\n`);
  const id = readId(file);
  if (id === undefined) throw new BrainIdError(`${file} vanished while it was being created`);
  return id;
}

function readId(file: string): string | undefined {
  const text = readIfExists(file);
  if (text === undefined) return undefined;
  const id = text.trim();
  if (!isBrainId(id)) throw new BrainIdError(`${file} does not hold a brain id (a UUID); it identifies this brain to its peers and devices: restore it from a backup, or delete it to make a new one (paired devices then no longer recognise the brain)`);
  return id;
}
