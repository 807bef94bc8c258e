// The specialist workers of the multi-agent router (spec 1.2): each has its own prompt, its own tool
// subset and the words that suggest it. `general` takes everything the others do not claim.
import type { SpecialistName } from '../../../protocol/session';

export interface Specialist {
  name: SpecialistName;
  prompt: string;
  /** Tool names offered to the model on this worker's turns (a trailing `*` is a prefix); null = every registered tool. */
  tools: readonly string[] | null;
  keywords: readonly string[];
}

const MEMORY = ['remember', 'search_memory', 'forget', 'knowledge_query'] as const;

export const SPECIALIST_LIST: readonly Specialist[] = [
  {
    name: 'general',
    prompt: 'You are the general assistant. Answer directly; use tools when they help.',
    tools: null,
    keywords: [],
  },
  {
    name: 'health',
    prompt:
      'You are the health specialist. Be careful and factual; you are not a doctor — suggest a professional for anything serious. Use what memory says about the user.',
    tools: [...MEMORY, 'identity', 'status'],
    keywords: 'health sleep slept heart pulse step weight exercise workout running run calorie blood pressure medication medicine pill doctor symptom sick ill pain headache diet water hydration stress meditation fitness nutrition vitamin'.split(' '),
  },
  {
    name: 'home',
    prompt: 'You are the home specialist. You control and report on devices; confirm what you changed. Never guess a device state: list devices first.',
    // hwdev_*: the tools generated from each device's actions; device_*: the hand-written device skills (docs/hardware.md).
    tools: ['list_devices', 'set_device', 'status', 'hwdev_*', 'device_*', ...MEMORY],
    keywords: 'home house lamp light switch turn thermostat temperature heating heater cooling door lock garage device sensor plug fan blind curtain tv scene room kitchen bedroom bathroom living hallway garden alarm vacuum brightness dim'.split(' '),
  },
  {
    name: 'research',
    prompt: 'You are the research specialist. Be precise, separate facts from guesses and say where a fact came from (memory id or source).',
    tools: [...MEMORY],
    keywords: 'research explain why history compare find look lookup define definition science scientific fact article paper study learn source evidence difference meaning'.split(' '),
  },
  {
    name: 'creative',
    prompt: 'You are the creative specialist. Be playful and original; offer a few options when asked for ideas.',
    tools: [...MEMORY, 'identity'],
    keywords: 'write poem story song lyric idea brainstorm draw design creative joke slogan name haiku rhyme tale imagine invent'.split(' '),
  },
];

export const SPECIALISTS_BY_NAME: ReadonlyMap<SpecialistName, Specialist> = new Map(SPECIALIST_LIST.map((s) => [s.name, s]));

export function specialist(name: SpecialistName): Specialist {
  return SPECIALISTS_BY_NAME.get(name) ?? SPECIALIST_LIST[0]!;
}
