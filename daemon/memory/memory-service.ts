// The memory facade the agent's tools and the HTTP routes call (spec 1.3, 4.4). It hides the tiers'
// repositories, the search engine and the episode writer behind a handful of verbs.
import type { ChatMessage } from '../kernel/conversation';
import type { Episode, KnowledgeQuery, KnowledgeResult, Note, SearchResponse, Triple, TripleInput } from '../../protocol/memory';
import { LIMITS } from '../../protocol/memory';
import { writeEpisode, type Summariser, type TranscriptSpan } from './episode-writer';
import type { EpisodeRepository } from './episode-repository';
import { tierOf } from './ids';
import type { KnowledgeGraph } from './knowledge-graph';
import type { MemoryJournalChange, MemoryReplicaPort } from './memory-journal';
import type { MemorySearch } from './memory-search';
import type { NoteRepository } from './note-repository';

export interface RememberOptions {
  /** Defaults to 'user'. The agent passes e.g. 'agent' or 'session:<id>'. */
  source?: string;
  tags?: string[];
}

export interface SearchOptions {
  /** 1..50, default 10 (protocol/memory.ts LIMITS.search). */
  limit?: number;
  /** Stops waiting for the embedding provider (search then answers lexically, degraded). */
  signal?: AbortSignal;
}

export interface MemoryService {
  /** Stores a note; resolves once it is durable. */
  remember(text: string, opts?: RememberOptions): Promise<Note>;
  /** Hybrid search across notes, episodes and knowledge; empty results when nothing is relevant. */
  search(q: string, opts?: SearchOptions): Promise<SearchResponse>;
  /** Deletes a note, episode or triple by id (the id prefix names the tier). False when unknown. */
  forget(id: string): Promise<boolean>;
  /** Knowledge-graph query: filter on subject/predicate/object, then follow `depth` hops. */
  knowledge(query: KnowledgeQuery): KnowledgeResult;
  /** Adds facts; the same (subject, predicate, object) from another source merges into one triple. */
  addTriples(triples: readonly TripleInput[], source: string): Promise<Triple[]>;
  /**
   * Summarises a finished (reason 'session_end') or compacted ('compaction') span of conversation and
   * stores it as an episode. Await it before dropping the messages. Null when nothing was said.
   */
  recordEpisode(span: TranscriptSpan): Promise<Episode | null>;
}

export type { ChatMessage, TranscriptSpan };

export interface MemoryParts {
  notes: NoteRepository;
  episodes: EpisodeRepository;
  knowledge: KnowledgeGraph;
  search: MemorySearch;
  /** The configured episode summariser (an LLM-backed one from the agent, or extractive offline). */
  summariser: Summariser;
  onSummariserFallback?: (err: unknown) => void;
  /** Redacts what was forgotten from a new episode (forgetting.ts); identity when absent. */
  redact?: (text: string) => string;
  /** Replies that say a request failed or was not understood (episode-writer.ts exchanges()). */
  isCanned?: (reply: string) => boolean;
}

/** The concrete facade over the tiers (constructed in daemon/main.ts by createMemory()). */
export class Memory implements MemoryService, MemoryReplicaPort {
  private summariser: Summariser;

  constructor(readonly parts: MemoryParts) {
    this.summariser = parts.summariser;
  }

  /**
   * The port the composition root fills once the providers exist (memory is built before them):
   * episodes are summarised by the model from then on (llm-summariser.ts), extractive when it fails.
   */
  useSummariser(summariser: Summariser): void {
    this.summariser = summariser;
  }

  remember(text: string, opts: RememberOptions = {}): Promise<Note> {
    return this.parts.notes.add({ text, source: opts.source, tags: opts.tags });
  }

  search(q: string, opts: SearchOptions = {}): Promise<SearchResponse> {
    return this.parts.search.search(q, { limit: Math.max(LIMITS.search.min, Math.min(LIMITS.search.max, opts.limit ?? LIMITS.search.default)), signal: opts.signal });
  }

  async forget(id: string): Promise<boolean> {
    switch (tierOf(id)) {
      case 'note':
        return this.parts.notes.delete(id);
      case 'episode':
        return this.parts.episodes.delete(id);
      case 'knowledge':
        return this.parts.knowledge.delete(id);
      default:
        return false;
    }
  }

  knowledge(query: KnowledgeQuery): KnowledgeResult {
    return this.parts.knowledge.query(query);
  }

  addTriples(triples: readonly TripleInput[], source: string): Promise<Triple[]> {
    return this.parts.knowledge.add(triples, source);
  }

  /**
   * Applies a change journaled on another brain (memory-journal.ts) through the repositories: FTS,
   * vectors and wiki follow it as they follow a local change, the local journal does not record it.
   * Idempotent: the same change again returns false and changes nothing.
   */
  applyRemote(change: MemoryJournalChange): Promise<boolean> {
    const { notes, episodes, knowledge } = this.parts;
    switch (change.kind) {
      case 'note.put':
        return notes.putRemote(change.record);
      case 'note.delete':
        return notes.deleteRemote(change.id);
      case 'episode.put':
        return episodes.putRemote(change.record);
      case 'episode.delete':
        return episodes.deleteRemote(change.id);
      case 'triple.put':
        return knowledge.putRemote(change.record);
      case 'triple.delete':
        return knowledge.deleteRemote(change.id);
    }
  }

  recordEpisode(span: TranscriptSpan): Promise<Episode | null> {
    const { episodes: sink, onSummariserFallback: onFallback, redact, isCanned } = this.parts;
    const summariser = this.summariser;
    return writeEpisode({ sink, summariser, ...(onFallback ? { onFallback } : {}), ...(redact ? { redact } : {}), ...(isCanned ? { isCanned } : {}) }, span);
  }
}
