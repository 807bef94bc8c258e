// Built-in memory tools (issue 4): remember, search_memory, forget, knowledge_query. They talk to the
// persistent tiers through the AgentMemory port; working memory is the session's own business.
import { Type } from '@sinclair/typebox';
import type { AgentMemory } from '../kernel/ports';
import { defineTool, ToolFailure, type Tool } from '../kernel/tool';
import { TEXT_PATTERN } from '../../protocol/text';

const SEARCH_LIMIT = 5;
const STORABLE_TEXT = new RegExp(TEXT_PATTERN, 'u');
const FORGET_LIMIT = 3;

export function memoryTools(memory: AgentMemory): Tool[] {
  return [
    defineTool({
      spec: {
        name: 'remember',
        description: 'Store a note in long-term memory, e.g. a fact the user wants kept.',
        parameters: Type.Object({ text: Type.String({ minLength: 1, maxLength: 4000, description: 'What to remember, as a full sentence' }) }),
      },
      safety: 'active',
      run: async ({ text }, ctx) => {
        // The API refuses such text in its schema; a model's argument is told so instead of being stored cut short.
        if (!STORABLE_TEXT.test(text)) throw new ToolFailure('the text holds control characters (U+0000 or others) that cannot be stored; leave them out');
        const note = await memory.remember(text, `session:${ctx.sessionId}`);
        return { summary: `I'll remember that ${stripFinal(note.text)}.`, data: { id: note.id, text: note.text }, sources: [note.id] };
      },
    }),
    defineTool({
      spec: {
        name: 'search_memory',
        description: 'Full-text search over notes, episode summaries and known facts.',
        parameters: Type.Object({ query: Type.String({ minLength: 1, maxLength: 500 }) }),
      },
      safety: 'passive',
      run: async ({ query }) => {
        const hits = await memory.search(query, SEARCH_LIMIT);
        if (hits.length === 0) return { summary: `I don't have anything about ${query} in memory.`, data: { results: [] } };
        // Notes and facts answer the question; an episode is a conversation summary that often just
        // repeats the exchange that stored the note ("User: remember… Assistant: I'll remember…").
        // The spoken answer uses episodes only when nothing else matched; `data` and `ui` keep all.
        const facts = hits.filter((h) => h.tier !== 'episode');
        const lines = (facts.length > 0 ? facts : hits).map((h) => stripFinal(h.summary));
        return {
          summary: facts.length > 0 ? `Here is what I know about ${query}: ${lines.join('; ')}.` : `From our past conversations about ${query}: ${lines.join('; ')}.`,
          data: { results: hits },
          sources: hits.map((h) => h.id),
          ui: { id: `memory-${query.slice(0, 40)}`, template: 'list', title: `Memory: ${query}`, data: { items: hits.map((h) => ({ id: h.id, text: h.summary, tier: h.tier, relevance: h.relevance })) } },
        };
      },
    }),
    defineTool({
      spec: {
        name: 'forget',
        description: 'Delete the notes that best match a description. Use only when the user asks to forget something.',
        parameters: Type.Object({ query: Type.String({ minLength: 1, maxLength: 500 }) }),
      },
      safety: 'active',
      run: async ({ query }) => {
        const removed = await memory.forget(query, FORGET_LIMIT);
        if (removed.length === 0) throw new ToolFailure(`no note matches ${JSON.stringify(query)}`);
        return {
          summary: `Forgotten: ${removed.map((r) => stripFinal(r.summary)).join('; ')}.`,
          data: { removed },
          sources: removed.map((r) => r.id),
        };
      },
    }),
    defineTool({
      spec: {
        name: 'knowledge_query',
        description: 'Facts (subject, predicate, object) the knowledge graph holds about a subject.',
        parameters: Type.Object({ subject: Type.String({ minLength: 1, maxLength: 200 }) }),
      },
      safety: 'passive',
      run: async ({ subject }) => {
        const facts = await memory.knowledge(subject, 20);
        if (facts.length === 0) return { summary: `I know no facts about ${subject}.`, data: { facts: [] } };
        return {
          summary: `Facts about ${subject}: ${facts.map((f) => `${f.subject} ${f.predicate} ${f.object}`).join('; ')}.`,
          data: { facts },
          sources: facts.map((f) => f.id),
        };
      },
    }),
  ];
}

/** "Milk is in the fridge." → "Milk is in the fridge" so it reads inside a sentence. */
export const stripFinal = (s: string): string => s.trim().replace(/[.!?]+$/, '');
