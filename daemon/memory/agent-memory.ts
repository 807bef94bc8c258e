// Adapts the MemoryService (memory-service.ts) to the narrow AgentMemory port (kernel/ports.ts) the
// tools, the context builder and the digital twin use. "forget X" is a search: only notes (what the
// user asked to keep) that match well are deleted — never episodes or facts on a vague phrase.
import type { MemoryService } from './memory-service';
import type { Triple } from '../../protocol/memory';
import type { AgentMemory, KnowledgeFact, MemoryHit } from '../kernel/ports';

/** Relevance a note must reach before "forget <phrase>" deletes it (search relevance is 0..1). */
export const FORGET_MIN_RELEVANCE = 0.5;

export function agentMemory(service: MemoryService): AgentMemory {
  return {
    remember: async (text, source) => {
      const note = await service.remember(text, { source });
      return { id: note.id, text: note.text };
    },
    search: async (query, limit) => {
      const res = await service.search(query, { limit });
      return res.results.map((r): MemoryHit => ({ id: r.id, tier: r.tier, summary: r.summary, relevance: r.relevance }));
    },
    forget: async (query, limit) => {
      const res = await service.search(query, { limit: Math.max(limit * 3, 10) });
      const notes = res.results.filter((r) => r.tier === 'note' && r.relevance >= FORGET_MIN_RELEVANCE).slice(0, limit);
      const removed: { id: string; summary: string }[] = [];
      for (const n of notes) if (await service.forget(n.id)) removed.push({ id: n.id, summary: n.summary });
      return removed;
    },
    knowledge: async (subject, limit) => {
      const res = service.knowledge({ subject, depth: 0, limit });
      return res.triples.map(fact);
    },
    addFacts: async (facts, source) => (await service.addTriples(facts, source)).map(fact),
  };
}

const fact = (t: Triple): KnowledgeFact => ({ id: t.id, subject: t.subject, predicate: t.predicate, object: t.object, confidence: t.confidence });
