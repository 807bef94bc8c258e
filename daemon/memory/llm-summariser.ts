// Episode summaries from the configured model (issue 9 item 17), bounded: one call at a time (a second
// episode while one is being summarised is "under load" and gets the extractive summary), a timeout,
// a token cap, and no answer from the embedded local agent (it has no model: its reply would be a
// canned sentence, not a summary). Any failure rejects, and writeEpisode() falls back to extractive.
import type { Provider } from '../providers/provider';
import type { ChatMessage } from '../kernel/conversation';
import type { Summariser } from './episode-writer';

export interface LlmSummariserOptions {
  /** The provider (the failover chain in the brain) asked for the summary. */
  provider: Pick<Provider, 'chat'>;
  timeoutMs?: number;
  maxTokens?: number;
  /** Most transcript characters sent (the newest are kept). */
  maxInputChars?: number;
}

export class SummaryUnavailable extends Error {}

const INSTRUCTIONS =
  'Summarise this conversation between a user and their assistant in at most three sentences, for the assistant to recall later. ' +
  'Keep names, dates, numbers and decisions; leave out greetings and small talk. Answer with the summary only.';

/** A Summariser whose id is the provider that answered (recorded on the episode as `summariser`). */
export function llmSummariser(opts: LlmSummariserOptions): Summariser & { readonly id: string } {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const maxTokens = opts.maxTokens ?? 200;
  const maxInputChars = opts.maxInputChars ?? 12_000;
  let busy = false;
  let answeredBy = 'llm';
  return {
    get id() {
      return answeredBy;
    },
    summarise: async (messages) => {
      if (busy) throw new SummaryUnavailable('another episode is being summarised');
      busy = true;
      try {
        const { text, provider } = await ask(opts.provider, transcript(messages, maxInputChars), { timeoutMs, maxTokens });
        answeredBy = provider;
        return text;
      } finally {
        busy = false;
      }
    },
  };
}

function transcript(messages: readonly ChatMessage[], maxChars: number): string {
  const lines = messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim() !== '').map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content.trim()}`);
  let text = lines.join('\n');
  if (text.length > maxChars) text = text.slice(text.length - maxChars);
  return text;
}

async function ask(provider: Pick<Provider, 'chat'>, text: string, limits: { timeoutMs: number; maxTokens: number }): Promise<{ text: string; provider: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new SummaryUnavailable(`no summary within ${limits.timeoutMs} ms`)), limits.timeoutMs);
  try {
    let out = '';
    for await (const ev of provider.chat({ messages: [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: text }], maxTokens: limits.maxTokens, signal: abort.signal })) {
      if (ev.type === 'text_delta') out += ev.text;
      else if (ev.type === 'tool_call') throw new SummaryUnavailable('the model asked for a tool instead of summarising');
      else if (ev.provider === 'local') throw new SummaryUnavailable('no model is configured (the local agent answered)');
      else return { text: out.trim(), provider: ev.provider };
    }
    throw new SummaryUnavailable('the model stream ended without finishing');
  } finally {
    clearTimeout(timer);
  }
}
