// Builds the memory capability from the store and the `memory` settings section: migrations, tiers,
// search, background embedding, recall flushing. daemon/main.ts calls it; tests call it with a temp
// store and, for the vector path, an embedder pointed at a loopback server.
import type { Logger } from 'pino';
import type { Settings } from '../config/settings-schema';
import type { Part } from '../kernel/parts';
import type { Store } from '../store/store';
import { DecayStore, RecallTracker } from './decay';
import { OpenAiEmbedder, type Embedder } from './embedder';
import { EmbeddingIndexer } from './embedding-indexer';
import { EpisodeRepository } from './episode-repository';
import { Forgetting } from './forgetting';
import { SummaryUnavailable } from './llm-summariser';
import { cannedReplies, extractiveSummariser, type Summariser } from './episode-writer';
import { KnowledgeGraph } from './knowledge-graph';
import type { MemoryChange, MemoryEvents } from './memory-events';
import { JournalRecorder, type MemoryJournal } from './memory-journal';
import { EventBus } from '../kernel/event-bus';
import { MEMORY_MIGRATIONS } from './memory-schema';
import { DEFAULT_TUNING, MemorySearch } from './memory-search';
import { Memory } from './memory-service';
import { NoteRepository } from './note-repository';
import { TermStats } from './term-stats';
import { VectorIndex } from './vector-index';
import { MemoryWiki } from './memory-wiki';
import { SessionSnapshots } from './session-snapshots';
import { InMemorySessions, type SessionPort } from './session-port';

export type MemorySettings = Settings['memory'];

export interface MemoryDeps {
  store: Store;
  settings: MemorySettings;
  logger: Logger;
  /** The embedding API key, read by the caller from the vault (namespace `providers`). */
  embeddingApiKey?: string | undefined;
  /** Overrides the OpenAI-compatible embedder built from settings (tests). */
  embedder?: Embedder;
  summariser?: Summariser;
  /** Live sessions for snapshots (the agent's session manager); an in-memory stand-in by default. */
  sessions?: SessionPort;
  /**
   * Reply templates that mean "not understood / failed" ({slot} = anything): an exchange answered by
   * one does not make a session worth an episode. The composition root hands in the local agent's
   * (LocalProvider.cannedReplies()); none by default.
   */
  cannedReplies?: readonly string[];
  /**
   * Where every change of notes, episodes and facts is recorded, in its own transaction
   * (memory-journal.ts): the brain passes its MemoryJournalSlot, which a sync capability fills. None by default.
   */
  journal?: MemoryJournal;
  clock?: () => number;
}

export interface MemoryCapability {
  memory: Memory;
  store: Store;
  decay: DecayStore;
  stats: TermStats;
  recalls: RecallTracker;
  indexer: EmbeddingIndexer | undefined;
  vectors: VectorIndex | undefined;
  embedder: Embedder | undefined;
  settings: MemorySettings;
  wiki: MemoryWiki;
  snapshots: SessionSnapshots;
  /** Every change to the tiers (the brain forwards them onto its bus as memory_changed). */
  events: MemoryEvents;
  /** Long-lived parts for the lifecycle (start in order, stop in reverse). */
  parts: Part[];
}

export function createMemory(deps: MemoryDeps): MemoryCapability {
  const { store, settings, logger } = deps;
  store.migrate('memory', MEMORY_MIGRATIONS);
  const clock = deps.clock ?? Date.now;
  const events = EventBus.logged<MemoryChange>(logger, 'memory');
  const stats = new TermStats(store, clock);
  const journal = new JournalRecorder(deps.journal);
  const forgetting = new Forgetting(store, stats, settings.search.relevance_floor, journal);
  const notes = new NoteRepository(store, events, journal, clock, forgetting);
  const episodes = new EpisodeRepository(store, events, journal, clock);
  const knowledge = new KnowledgeGraph(store, events, journal, clock);
  events.on('term-stats', (c) => c.text !== undefined && stats.forgetText(c.text));
  const decay = new DecayStore(store, settings.decay);
  const recalls = new RecallTracker(store, (err) => logger.warn({ err }, 'memory: writing recall counts failed; those counts are lost (they only shift ranking weights)'));
  const embedder = deps.embedder ?? (settings.embeddings.base_url ? new OpenAiEmbedder({ baseUrl: settings.embeddings.base_url, model: settings.embeddings.model, apiKey: deps.embeddingApiKey }) : undefined);
  const vectors = embedder ? new VectorIndex(store, embedder.model) : undefined;
  const indexer = embedder && vectors ? new EmbeddingIndexer({ store, embedder, index: vectors, events, logger: logger.child({ part: 'memory-embeddings' }) }) : undefined;
  const search = new MemorySearch({
    store,
    stats,
    decay,
    recalls,
    vectors: embedder && vectors ? { index: vectors, embedder } : undefined,
    tuning: { ...DEFAULT_TUNING, floor: settings.search.relevance_floor, recencyWeight: settings.search.recency_weight, minSimilarity: settings.embeddings.min_similarity, embedTimeoutMs: settings.embeddings.query_timeout_ms },
    clock,
  });
  const memory = new Memory({
    notes,
    episodes,
    knowledge,
    search,
    summariser: deps.summariser ?? extractiveSummariser(),
    redact: (text) => forgetting.redact(text),
    isCanned: cannedReplies(deps.cannedReplies ?? []),
    onSummariserFallback: (err) =>
      err instanceof SummaryUnavailable ? logger.debug({ reason: err.message }, 'episode summarised extractively') : logger.warn({ err }, 'episode summariser failed; wrote an extractive summary instead'),
  });
  const wiki = new MemoryWiki(store, events, (err) => logger.error({ err }, 'wiki: marking pages stale failed'), clock);
  const snapshots = new SessionSnapshots(store, deps.sessions ?? new InMemorySessions(), clock);
  const parts: Part[] = [
    { name: 'memory-recalls', start: () => recalls.start(), stop: () => recalls.stop() },
    ...(indexer ? [{ name: 'memory-embeddings', start: () => indexer.start(), stop: () => indexer.stop() }] : []),
  ];
  return { memory, store, decay, stats, recalls, indexer, vectors, embedder, settings, wiki, snapshots, events, parts };
}
