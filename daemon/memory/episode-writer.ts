// Episodes (spec 1.3): conversation summaries written automatically when a session ends or is
// compacted. The caller awaits writeEpisode() BEFORE it drops any context: the promise resolves only
// once the episode is durable, so compaction never loses what was said. When the configured (LLM)
// summariser fails, the offline extractive one writes the episode instead of nothing.
import type { ChatMessage } from '../kernel/conversation';
import type { Episode, EpisodeReason } from '../../protocol/memory';
import { contentWords } from '../kernel/text';

export interface Summariser {
  /** 'extractive', or the provider id of the LLM behind it (recorded on the episode). */
  readonly id: string;
  summarise(messages: readonly ChatMessage[]): Promise<string>;
}

export interface EpisodeInput {
  sessionId: string | null;
  summary: string;
  reason: EpisodeReason;
  summariser: string;
  messageCount: number;
  startedAt: number | null;
  endedAt: number | null;
  /** False for a trivial session: stored and listed, never searched (default true). */
  searchable?: boolean;
}

/** Where episodes go (EpisodeRepository implements it); resolves after the commit. */
export interface EpisodeSink {
  addEpisode(input: EpisodeInput): Promise<Episode>;
}

export interface TranscriptSpan {
  sessionId: string | null;
  messages: readonly ChatMessage[];
  reason: EpisodeReason;
  /** Epoch ms of the first and last message, when the session tracks them. */
  startedAt?: number;
  endedAt?: number;
}

export interface EpisodeWriterDeps {
  sink: EpisodeSink;
  summariser: Summariser;
  /** Used when `summariser` throws; defaults to the extractive summariser. */
  fallback?: Summariser;
  onFallback?: (err: unknown) => void;
  /** Takes out what the user asked to forget (forgetting.ts), from the transcript and the summary. */
  redact?: (text: string) => string;
  /** Assistant replies that say a request was not understood or failed (the local agent's fallback). */
  isCanned?: (reply: string) => boolean;
}

/** Exchanges a session needs before its episode is searchable: one-shot sessions only repeat a note or a failure. */
export const MIN_EXCHANGES = 2;

/**
 * Exchanges that carry something: a user message with a content word (a greeting has none) answered
 * by an assistant reply that is not canned (a fallback or a failure).
 */
export function exchanges(messages: readonly ChatMessage[], isCanned: (reply: string) => boolean = () => false): number {
  let n = 0;
  let asked = false;
  for (const m of messages) {
    if (m.role === 'user') asked = contentWords(m.content).length > 0;
    else if (m.role === 'assistant' && asked && m.content.trim() !== '') {
      if (!isCanned(m.content.trim())) n++;
      asked = false;
    }
  }
  return n;
}

/** A canned-reply test from reply templates ("I didn't understand “{text}”…"): each {slot} matches anything. */
export function cannedReplies(templates: readonly string[]): (reply: string) => boolean {
  const res = templates.map((t) => new RegExp(`^${t.split(/\{[a-z_]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`));
  return (reply) => res.some((re) => re.test(reply));
}

/** Summarises a span of conversation and stores it; null when the span has nothing said in it. */
export async function writeEpisode(deps: EpisodeWriterDeps, span: TranscriptSpan): Promise<Episode | null> {
  const redact = deps.redact ?? ((text: string) => text);
  const messages = span.messages.map((m): ChatMessage => (m.role === 'user' || m.role === 'assistant' ? { ...m, content: redact(m.content) } : m));
  const said = messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim() !== '');
  if (said.length === 0) return null;
  let used = deps.summariser;
  let summary: string;
  try {
    summary = (await deps.summariser.summarise(messages)).trim();
    if (summary === '') throw new Error(`summariser ${deps.summariser.id} returned an empty summary`);
  } catch (err) {
    deps.onFallback?.(err);
    used = deps.fallback ?? extractiveSummariser();
    summary = (await used.summarise(messages)).trim();
  }
  summary = redact(summary);
  if (!hasContent(summary)) return null;
  return deps.sink.addEpisode({
    sessionId: span.sessionId,
    summary,
    reason: span.reason,
    summariser: used.id,
    messageCount: span.messages.length,
    startedAt: span.startedAt ?? null,
    endedAt: span.endedAt ?? null,
    searchable: exchanges(messages, deps.isCanned) >= MIN_EXCHANGES,
  });
}

/** Words of its own beyond speaker labels and redaction marks. */
const hasContent = (summary: string): boolean => contentWords(summary).some((w) => !/^(user|assistant|forgotten)$/.test(w));

const SENTENCE = /[^.!?\n]+[.!?]*/g;

interface Sentence {
  /** As it goes into the summary ("User: ..."). */
  text: string;
  /** As it was said, for scoring. */
  body: string;
  order: number;
  score: number;
}

/**
 * Offline summary: the sentences that carry the conversation's most frequent content words, in the
 * order they were said, prefixed by who said them, within `maxChars`. Deterministic, no model.
 */
export function extractiveSummariser(opts: { maxChars?: number; maxSentences?: number } = {}): Summariser {
  const maxChars = opts.maxChars ?? 600;
  const maxSentences = opts.maxSentences ?? 5;
  return {
    id: 'extractive',
    summarise: async (messages) => {
      const sentences = splitSentences(messages);
      if (sentences.length === 0) return '';
      const freq = new Map<string, number>();
      for (const s of sentences) for (const w of new Set(contentWords(s.body))) freq.set(w, (freq.get(w) ?? 0) + 1);
      for (const s of sentences) {
        const ws = contentWords(s.body);
        s.score = ws.length === 0 ? 0 : ws.reduce((sum, w) => sum + (freq.get(w) ?? 0), 0) / Math.sqrt(ws.length);
      }
      // The opening user request frames the conversation; it is always kept.
      const picked = new Set<Sentence>([sentences[0]!]);
      for (const s of [...sentences].sort((a, b) => b.score - a.score || a.order - b.order)) {
        if (picked.size >= maxSentences) break;
        picked.add(s);
      }
      let out = '';
      for (const s of [...picked].sort((a, b) => a.order - b.order)) {
        const next = out === '' ? s.text : `${out} ${s.text}`;
        if (next.length > maxChars) break;
        out = next;
      }
      return out === '' ? sentences[0]!.text.slice(0, maxChars) : out;
    },
  };
}

function splitSentences(messages: readonly ChatMessage[]): Sentence[] {
  const out: Sentence[] = [];
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const who = m.role === 'user' ? 'User' : 'Assistant';
    for (const raw of m.content.match(SENTENCE) ?? []) {
      const text = raw.trim();
      if (contentWords(text).length === 0) continue;
      out.push({ text: `${who}: ${/[.!?]$/.test(text) ? text : `${text}.`}`, body: text, order: out.length, score: 0 });
    }
  }
  return out;
}
