// Intent classification for the multi-agent router (spec 1.2). Deterministic keyword scoring plus
// learned preferences: a correction ("that was a home question") pins the question and weights its
// words, so the next similar question goes to the right specialist. No model call: routing costs
// microseconds and works offline with the embedded local agent.
import type { SpecialistName } from '../../../protocol/session';
import { terms } from '../../kernel/text';
import type { RoutePreferences } from './route-preferences';
import { SPECIALIST_LIST, specialist, type Specialist } from './specialists';

/** A learned term counts this much more than a built-in keyword: the user's word beats the default. */
const PREFERENCE_WEIGHT = 2;

export interface Route {
  specialist: Specialist;
  reason: 'pinned' | 'keywords' | 'preferences' | 'default' | 'disabled';
  scores: Partial<Record<SpecialistName, number>>;
}

export interface RouterOptions {
  enabled: boolean;
  learn: boolean;
}

const NAMES = 'general|health|home|research|creative';
const CORRECTIONS: readonly RegExp[] = [
  new RegExp(
    `^(?:no[,.!]?\\s+)?(?:that|this|it)(?:'s|\\s+was|\\s+is|\\s+should\\s+(?:have\\s+)?(?:been|gone\\s+to))\\s+(?:an?\\s+|the\\s+)?(${NAMES})(?:\\s+(?:question|request|thing|one|topic|query|specialist|matter))?\\s*[.!]*$`,
    'i',
  ),
  new RegExp(`^(?:route|send|give)\\s+(?:that|this|it)\\s+to\\s+(?:the\\s+)?(${NAMES})(?:\\s+specialist)?\\s*[.!]*$`, 'i'),
];

const KEYWORDS: ReadonlyMap<string, SpecialistName[]> = (() => {
  const m = new Map<string, SpecialistName[]>();
  for (const s of SPECIALIST_LIST) for (const k of s.keywords) m.set(k, [...(m.get(k) ?? []), s.name]);
  return m;
})();

export class Router {
  constructor(
    private readonly preferences: RoutePreferences | null,
    private readonly options: RouterOptions = { enabled: true, learn: true },
  ) {}

  classify(text: string): Route {
    if (!this.options.enabled) return { specialist: specialist('general'), reason: 'disabled', scores: {} };
    const pinned = this.preferences?.pinned(text);
    if (pinned) return { specialist: specialist(pinned), reason: 'pinned', scores: { [pinned]: Infinity } };
    const scores: Partial<Record<SpecialistName, number>> = {};
    let learned = false;
    for (const term of terms(text)) {
      for (const name of KEYWORDS.get(term) ?? []) scores[name] = (scores[name] ?? 0) + 1;
      for (const [name, w] of this.preferences?.termWeights(term) ?? []) {
        scores[name] = (scores[name] ?? 0) + PREFERENCE_WEIGHT * w;
        learned = true;
      }
    }
    let best: SpecialistName = 'general';
    let bestScore = 0;
    for (const [name, score] of Object.entries(scores) as [SpecialistName, number][]) {
      if (score > bestScore) [best, bestScore] = [name, score];
    }
    const reason = bestScore === 0 ? 'default' : learned ? 'preferences' : 'keywords';
    return { specialist: specialist(best), reason, scores };
  }

  /** The specialist a correction names, or null when the text is not a routing correction. */
  correction(text: string): SpecialistName | null {
    if (!this.options.learn || !this.preferences) return null;
    for (const re of CORRECTIONS) {
      const m = re.exec(text.trim());
      if (m) return m[1]!.toLowerCase() as SpecialistName;
    }
    return null;
  }

  /** Stores a correction of how `previousText` should have been routed. */
  async learn(previousText: string, to: SpecialistName): Promise<void> {
    if (!this.preferences) return;
    await this.preferences.learn(previousText, terms(previousText), to);
  }
}
