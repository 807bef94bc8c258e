// Where a node keeps its node key (node-protocol.md, "Pairing a node"): `<key dir>/<safe>.key`, 0600.
// `<safe>` replaces every character outside [A-Za-z0-9._:-] with `_`; a node_id that needed no change
// and is 1–128 characters long is used as is, anything else becomes its first 128 characters (after
// replacement), `-`, and the first 8 hex digits of sha256(node_id), so two ids that sanitise alike
// still get different files.
import { createHash } from 'node:crypto';

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;

export function safeNodeId(nodeId: string): string {
  if (SAFE.test(nodeId)) return nodeId;
  const replaced = nodeId.replace(/[^A-Za-z0-9._:-]/gu, '_');
  const hash = createHash('sha256').update(nodeId, 'utf8').digest('hex').slice(0, 8);
  return `${replaced.slice(0, 128)}-${hash}`;
}

/** The file name (no directory) of a node's key. */
export const nodeKeyFileName = (nodeId: string): string => `${safeNodeId(nodeId)}.key`;
