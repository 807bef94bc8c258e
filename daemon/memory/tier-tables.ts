// How each searchable tier is laid out in SQL, so one search routine serves all three.
import type { Tier } from '../../protocol/memory';

export interface TierTables {
  tier: Tier;
  table: string;
  fts: string;
  vocab: string;
  /** SQL expression giving the item's searchable text (what the FTS5 index holds). */
  text: string;
  /** SQL expression giving the item's summary in search results (spec 2.9). */
  summary: string;
  /** Columns of the FTS5 table, the last the CJK units (each is highlighted to learn which query terms an item holds). */
  columns: number;
  /** SQL condition on the item table (alias x) for items that are searched and embedded at all. */
  searchable: string;
}

export const TIERS: readonly TierTables[] = [
  { tier: 'note', table: 'memory_notes', fts: 'memory_notes_fts', vocab: 'memory_notes_vocab', text: "text || ' ' || tags", summary: 'text', columns: 3, searchable: '1' },
  { tier: 'episode', table: 'memory_episodes', fts: 'memory_episodes_fts', vocab: 'memory_episodes_vocab', text: 'summary', summary: 'summary', columns: 2, searchable: 'x.searchable = 1' },
  {
    tier: 'knowledge',
    table: 'memory_triples',
    fts: 'memory_triples_fts',
    vocab: 'memory_triples_vocab',
    text: "subject || ' ' || predicate || ' ' || object",
    summary: "subject || ' ' || predicate || ' ' || object",
    columns: 4,
    searchable: '1',
  },
];

export const tierTables = (tier: Tier): TierTables => TIERS.find((t) => t.tier === tier)!;
