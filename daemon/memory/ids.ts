// Public ids of memory items: a tier prefix (so forget(id) knows the tier), then a time-sortable part
// and randomness. Triples are different: their id is a hash of the normalised fact (knowledge-graph.ts).
import { randomBytes } from 'node:crypto';

export type IdPrefix = 'note' | 'ep' | 'kg' | 'snap';

export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomBytes(5).toString('hex')}`;
}

export function tierOf(id: string): 'note' | 'episode' | 'knowledge' | undefined {
  if (id.startsWith('note_')) return 'note';
  if (id.startsWith('ep_')) return 'episode';
  if (id.startsWith('kg_')) return 'knowledge';
  return undefined;
}

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
