// reminder, a first-party skill (docs/skills.md "First-party skills"): timers and reminders on
// TaskFlows (docs/taskflows.md). Setting one calls start_taskflow with a flow titled "Reminder: <text>"
// of a wait step (`seconds` or `until`) and a note step that stores "Reminder: <text>" in memory, plus a
// prompt step when `announce` is set, so the agent says it in the flow's session. The text travels in
// the flow's context and the steps name it as {{context.reminder}}: the engine resolves that once and
// never reads what the user wrote as a template. {list: true} calls list_taskflows over every session
// and keeps the flows titled "Reminder: " that have not finished. A start_taskflow the approval policy
// holds ends the run as held (the brain answers with the request id); nothing here waits for a person.

class ReminderError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ReminderError';
  }
}

const TITLE_PREFIX = 'Reminder: ';
const MAX_TITLE = 200;
const PENDING = ['queued', 'running', 'waiting'];
/** ISO 8601 with a zone, as the wait step's `until` takes it (docs/taskflows.md "Steps", daemon/taskflows/flow-validation.ts). */
const ISO_WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

async function main(params) {
  if (params.list === true) return listReminders(params);
  return setReminder(params);
}

async function setReminder(params) {
  const text = cleanText(params.text);
  const wait = waitStep(params);
  const steps = [wait.step, { type: 'note', text: `${TITLE_PREFIX}{{context.reminder}}` }];
  if (params.announce === true) steps.push({ type: 'prompt', text: 'A reminder the user asked for is due now: "{{context.reminder}}". Tell them so in one short sentence.' });
  const started = await call_tool('start_taskflow', { title: titleOf(text), context: { reminder: text }, steps });
  const flow = started.data;
  log('reminder set', flow.id, 'due', wait.due);
  return { reminder: { id: flow.id, text, due: wait.due, status: flow.status, announce: params.announce === true }, text: `Reminder set for ${wait.due}${wait.delay ? ` (${wait.delay})` : ''}: ${text}` };
}

/** The wait step for exactly one of in_seconds and at, and when it ends (ISO, UTC). */
function waitStep(params) {
  const hasIn = params.in_seconds !== undefined;
  const hasAt = params.at !== undefined;
  if (hasIn === hasAt) throw new ReminderError('give exactly one of in_seconds (a timer) and at (an ISO 8601 time with Z or an offset)');
  if (hasIn) {
    const seconds = params.in_seconds;
    if (!Number.isInteger(seconds) || seconds < 1) throw new ReminderError('in_seconds is a whole number of seconds, at least 1');
    return { step: { type: 'wait', seconds }, due: new Date(Date.now() + seconds * 1000).toISOString(), delay: `in ${delayText(seconds)}` };
  }
  const at = String(params.at).trim();
  const when = instant(at);
  if (when === null) throw new ReminderError(`at "${params.at}" is not an ISO 8601 time with Z or an offset, like 2026-05-01T07:30:00+02:00`);
  if (when <= Date.now()) throw new ReminderError(`at ${at} is in the past`);
  return { step: { type: 'wait', until: at }, due: new Date(when).toISOString(), delay: null };
}

/** Epoch ms of an ISO time with a zone whose date exists (February 30 is refused, not rolled over), else null. */
function instant(text) {
  const m = ISO_WITH_ZONE.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0));
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

async function listReminders(params) {
  if (params.text !== undefined || params.in_seconds !== undefined || params.at !== undefined) throw new ReminderError('list takes no text, in_seconds or at');
  const listed = await call_tool('list_taskflows', { all_sessions: true, limit: 50 });
  const reminders = listed.data.taskflows
    .filter((f) => f.title.startsWith(TITLE_PREFIX) && PENDING.includes(f.status))
    .map((f) => ({ id: f.id, text: f.title.slice(TITLE_PREFIX.length), due: f.wait_until === null ? null : new Date(f.wait_until * 1000).toISOString(), status: f.status, session_id: f.session_id }))
    .sort((a, b) => (a.due ?? '').localeCompare(b.due ?? ''));
  const lines = reminders.map((r) => `${r.due ?? 'due now'}: ${r.text}`);
  return { count: reminders.length, reminders, text: reminders.length === 0 ? 'No reminders are pending.' : `${reminders.length} pending: ${lines.join('; ')}` };
}

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text as memory stores it: no control characters besides tab and line breaks, no lone surrogate, not blank. */
function cleanText(raw) {
  const text = typeof raw === 'string' ? raw.replace(CONTROL, '').replace(LONE_SURROGATE, '').trim() : '';
  if (text === '') throw new ReminderError('text says what to be reminded of (a non-blank string)');
  return text;
}

/** One line of at most 200 characters, as a flow title must be. */
function titleOf(text) {
  const line = `${TITLE_PREFIX}${text.replace(/\s+/g, ' ')}`;
  if (line.length <= MAX_TITLE) return line;
  const cut = line.slice(0, MAX_TITLE - 1);
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

function delayText(seconds) {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
  return `${Math.round(seconds / 86400)} days`;
}
