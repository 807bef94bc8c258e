// The content-derived id of a knowledge triple: the hash of its normalised subject, predicate and object,
// so the same fact learnt on two brains is one record whose sources merge (docs/sync.md, "The model").
// The same formula as daemon/memory/knowledge-graph.ts; test/sync/triple-id.test.ts holds them equal.
import { createHash } from 'node:crypto';

/** Case, Unicode form and spacing do not make a different fact. */
export const entityKey = (s: string): string => s.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ');

export const tripleId = (subject: string, predicate: string, object: string): string =>
  `kg_${createHash('sha256').update(`${entityKey(subject)}\u0000${entityKey(predicate)}\u0000${entityKey(object)}`).digest('hex').slice(0, 24)}`;
