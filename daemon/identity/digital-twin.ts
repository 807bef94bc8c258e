// The digital twin (spec 2.11, 4.5): answers a question the way the user would, from USER.md and
// memory. It is extractive: it only says what the evidence says, in the first person, and its
// confidence is the strength of that evidence. With nothing to go on it says it does not know, with
// low confidence — it never guesses (docs/agent.md explains the scoring). Evidence must clear the same
// relevance floor as memory search (settings memory.search.relevance_floor, docs/memory.md): a memory
// hit has cleared it in the search itself; a USER.md line must hold that share of the question's
// terms. "What is my netflix password?" against a wifi password covers half the question: not enough.
import type { TwinAnswer, TwinProfile } from '../../protocol/identity';
import type { AgentMemory, DeviceDirectory, DeviceSummary, IdentitySource } from '../kernel/ports';
import { overlap, terms } from '../kernel/text';
import { userFacts, userName, USER_TEMPLATE } from './identity-text';

const UNKNOWN_CONFIDENCE = 0.05;
const MAX_EVIDENCE = 3;

interface Candidate {
  source: string;
  text: string;
  score: number;
}

export class DigitalTwin {
  constructor(
    private readonly identity: IdentitySource,
    private readonly memory: AgentMemory | null,
    private readonly opts: { relevanceFloor: number },
    private readonly devices: Pick<DeviceDirectory, 'list'> | null = null,
  ) {}

  profile(): TwinProfile {
    const user = this.identity.user();
    const facts = userFacts(user).length;
    return { name: userName(user), facts, memory: this.memory !== null, ready: user !== USER_TEMPLATE && facts > 0 };
  }

  async ask(question: string): Promise<TwinAnswer> {
    const q = terms(question);
    const floor = this.opts.relevanceFloor;
    const fromFile = this.fromUserFile(q).filter((c) => c.score >= floor);
    const fromDevices = this.fromDevices(q).filter((c) => c.score >= floor);
    const candidates = [...fromFile, ...fromDevices, ...(await this.fromMemory(question, q))].sort((a, b) => b.score - a.score);
    if (q.length === 0 || candidates.length === 0) {
      return { answer: "I don't know — nothing in USER.md or my memory says anything about that.", confidence: UNKNOWN_CONFIDENCE, evidence: [] };
    }
    const used = candidates.slice(0, MAX_EVIDENCE);
    const best = used[0]!.score;
    // One matching statement is weak support; full term coverage plus corroboration is strong.
    const confidence = Math.min(0.95, 0.3 + 0.45 * best + 0.1 * (used.length - 1));
    const answer = used
      .slice(0, 2)
      .map((c) => firstPerson(c.text))
      .join(' ');
    return { answer, confidence: Math.round(confidence * 100) / 100, evidence: used.map((c) => ({ source: c.source, text: c.text })) };
  }

  private fromUserFile(q: readonly string[]): Candidate[] {
    return userFacts(this.identity.user()).map((text) => ({ source: 'USER.md', text, score: overlap(q, terms(text)) }));
  }

  /** The connected devices' last readings ("what is the temperature in the hall?"), named `device:<id>`. */
  private fromDevices(q: readonly string[]): Candidate[] {
    if (!this.devices) return [];
    return this.devices.list().flatMap((d) => {
      const text = deviceStatement(d);
      return text === null ? [] : [{ source: `device:${d.id}`, text, score: overlap(q, terms(`${text} ${d.kind}`)) }];
    });
  }

  private async fromMemory(question: string, q: readonly string[]): Promise<Candidate[]> {
    if (!this.memory) return [];
    // Every hit cleared the floor on the idf-weighted share of the question it holds (rare words such
    // as "netflix" weigh most); episodes only retell conversations, the notes and facts answer.
    const hits = await this.memory.search(question, 5);
    return hits.filter((h) => h.tier !== 'episode').map((h) => ({ source: h.id, text: h.summary, score: Math.max(overlap(q, terms(h.summary)), h.relevance) }));
  }
}

/** "Hall thermostat (online) reads celsius 21.5 and target 22." — no colon, so firstPerson leaves it as it is. */
export function deviceStatement(d: DeviceSummary): string | null {
  const readings = Object.entries(d.state).filter(([, v]) => v !== null);
  if (readings.length === 0) return null;
  const listed = readings.slice(0, 6).map(([k, v]) => `${k.replace(/[._]/g, ' ')} ${String(v)}`);
  const joined = listed.length === 1 ? listed[0]! : `${listed.slice(0, -1).join(', ')} and ${listed.at(-1)!}`;
  return `${d.name} (${d.online ? 'online' : 'offline'}) reads ${joined.replace(/:/g, ' ')}.`;
}

/** "Favourite food: ramen" → "My favourite food is ramen."; "The user likes tea" → "I like tea." */
export function firstPerson(text: string): string {
  const kv = /^([^:]{1,60}):\s*(.+)$/.exec(text);
  if (kv) return sentence(`My ${kv[1]!.trim().replace(/^my\s+/i, '').toLowerCase()} is ${kv[2]!.trim()}`);
  const rewritten = text
    .replace(/^(the )?user's\s+/i, 'My ')
    .replace(/^(the )?user\s+(is|was)\b/i, 'I am')
    .replace(/^(the )?user\s+(\w+?)s\b/i, 'I $2');
  return sentence(rewritten);
}

const sentence = (s: string): string => {
  const t = s.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
};
