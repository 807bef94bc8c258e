// daily-briefing, a first-party skill (docs/skills.md "First-party skills"): a short morning summary
// from what the brain already holds, with no network. It asks, all at once (at most 14 calls, under the
// sandbox's 16 pending): list_taskflows for the reminders still pending (flows titled "Reminder: ", as
// the reminder skill makes them), search_memory for each topic (notes and facts; conversation episodes
// are left out, they mostly repeat a note), knowledge_query for each subject, and list_devices for the
// devices and their readings. A call that fails (a tool this brain does not have) marks its section
// unavailable instead of ending the briefing. The result is {text, sections, generated_at}: a paragraph
// to read or say, and one SDUI `list` component per section ({id, template, title, data: {items}}).

const DEFAULT_TOPICS = ['today', 'tomorrow', 'appointment', 'reminder', 'birthday', 'todo', 'plan'];
const DEFAULT_SUBJECTS = ['user'];
const DEFAULT_MAX_ITEMS = 5;
const REMINDER_PREFIX = 'Reminder: ';
const PENDING = ['queued', 'running', 'waiting'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

async function main(params) {
  const topics = params.topics ?? DEFAULT_TOPICS;
  const subjects = params.subjects ?? DEFAULT_SUBJECTS;
  const max = params.max_items ?? DEFAULT_MAX_ITEMS;
  const [flows, searches, knowledge, devices] = await Promise.all([
    attempt(call_tool('list_taskflows', { all_sessions: true, limit: 50 })),
    Promise.all(topics.map((query) => attempt(call_tool('search_memory', { query })))),
    Promise.all(subjects.map((subject) => attempt(call_tool('knowledge_query', { subject })))),
    attempt(call_tool('list_devices', {})),
  ]);
  const now = new Date();
  const sections = [remindersSection(flows, max), memorySection(searches, max), knowledgeSection(knowledge, max), devicesSection(devices, max)];
  log('briefing', sections.map((s) => `${s.id}:${s.data.items.length}`).join(' '));
  return { text: [greeting(now), ...sections.map((s) => s.data.sentence)].filter((line) => line !== '').join('\n'), sections: sections.map(withoutSentence), generated_at: now.toISOString() };
}

/** A tool's result, or {failed: message} when the call was refused or the tool is missing. */
function attempt(promise) {
  return promise.then(
    (value) => value,
    (error) => ({ failed: error instanceof Error ? error.message : String(error) }),
  );
}

function section(id, title, items, sentence, unavailable) {
  return { id: `briefing-${id}`, template: 'list', title, data: { items, ...(unavailable ? { unavailable } : {}), sentence } };
}

/** The component as the dashboard gets it: the sentence belongs to the text only. */
function withoutSentence(s) {
  const { sentence, ...data } = s.data;
  return { ...s, data };
}

function remindersSection(flows, max) {
  if (flows.failed) return section('reminders', 'Reminders', [], '', flows.failed);
  const items = flows.data.taskflows
    .filter((f) => f.title.startsWith(REMINDER_PREFIX) && PENDING.includes(f.status))
    .map((f) => ({ id: f.id, text: f.title.slice(REMINDER_PREFIX.length), due: f.wait_until === null ? null : new Date(f.wait_until * 1000).toISOString() }))
    .sort((a, b) => (a.due ?? '').localeCompare(b.due ?? ''))
    .slice(0, max);
  const sentence = items.length === 0 ? '' : `Reminders: ${items.map((r) => (r.due ? `${r.text} (${clock(r.due)})` : r.text)).join('; ')}.`;
  return section('reminders', 'Reminders', items, sentence);
}

function memorySection(searches, max) {
  const failed = searches.find((s) => s.failed);
  if (failed && searches.every((s) => s.failed)) return section('memory', 'From memory', [], '', failed.failed);
  const byId = new Map();
  for (const hit of searches.flatMap((s) => (s.failed ? [] : s.data.results))) {
    if (hit.tier === 'episode') continue;
    const seen = byId.get(hit.id);
    if (!seen || seen.relevance < hit.relevance) byId.set(hit.id, hit);
  }
  const items = [...byId.values()]
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, max)
    .map((h) => ({ id: h.id, text: sentenceOf(h.summary), tier: h.tier }));
  const sentence = items.length === 0 ? '' : `From memory: ${items.map((i) => i.text).join('; ')}.`;
  return section('memory', 'From memory', items, sentence);
}

function knowledgeSection(results, max) {
  const failed = results.find((r) => r.failed);
  if (failed && results.every((r) => r.failed)) return section('knowledge', 'What I know', [], '', failed.failed);
  const items = results
    .flatMap((r) => (r.failed ? [] : r.data.facts))
    .slice(0, max)
    .map((f) => ({ id: f.id, text: `${f.subject} ${f.predicate} ${f.object}` }));
  const sentence = items.length === 0 ? '' : `I know that ${items.map((i) => i.text).join('; ')}.`;
  return section('knowledge', 'What I know', items, sentence);
}

function devicesSection(devices, max) {
  if (devices.failed) return section('devices', 'Devices', [], '', devices.failed);
  const list = devices.data.devices;
  const online = list.filter((d) => d.online).length;
  const items = list.slice(0, max).map((d) => ({ id: d.id, text: `${d.name}: ${d.online ? readings(d.state) : 'offline'}`, online: d.online }));
  const sentence = list.length === 0 ? 'No devices are connected.' : `Devices, ${online} of ${list.length} online: ${items.map((i) => i.text).join('; ')}.`;
  return section('devices', 'Devices', items, sentence);
}

/** "temperature 21.5, power on", or "no readings". */
function readings(state) {
  const parts = Object.entries(state ?? {})
    .filter(([, v]) => v !== null)
    .map(([k, v]) => (k === 'power' ? `power ${v}` : `${k} ${v}`));
  return parts.length === 0 ? 'no readings' : parts.join(', ');
}

/** "Good morning. It is Wednesday, 25 November 2026." in the sandbox's zone (UTC). */
function greeting(now) {
  return `Good morning. It is ${DAYS[now.getUTCDay()]}, ${now.getUTCDate()} ${MONTHS[now.getUTCMonth()]} ${now.getUTCFullYear()}.`;
}

/** "2026-11-25T07:30:00.000Z" → "25 Nov 07:30 UTC". */
function clock(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()].slice(0, 3)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

const sentenceOf = (s) => String(s).trim().replace(/[.!?]+$/, '');
