// svc (REPL) and svc '<message>' (one-shot), spec 4.14: chat with the brain over /v1/session with
// streaming output. The REPL keeps one session open; /quit ends it (its episode is written).
import { createInterface } from 'node:readline';
import { styleText } from 'node:util';
import type { BrainMessage, BrainMessageOf } from '../../protocol/session';
import type { ApprovalResolution } from '../../protocol/approvals';
import { clip } from '../../protocol/clip';
import type { DashboardStatus } from '../../protocol/dashboard';
import type { Soul } from '../../protocol/identity';
import type { ConnectedDeviceList } from '../../protocol/hardware';
import { BrainRefusedError, callBrain, callBrainOk, type Connection } from '../connection';
import { ChatSession, SessionError, type TextResponse } from './chat-session';

export interface ChatIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
  errors: NodeJS.WritableStream;
  interactive: boolean;
}

/**
 * svc '<message>': prints the streamed answer; exit 0 when the turn ended normally. A tool call the
 * turn held for approval is asked inline on a terminal, and the continuation's answer printed too;
 * without a terminal the request id and the commands that resolve it go to stderr.
 */
export async function oneShot(conn: Connection, text: string, io: ChatIo): Promise<number> {
  const session = await ChatSession.connect(conn);
  try {
    await session.open();
    const { turnId, done } = session.ask(text);
    const shown = new Set([turnId]);
    const held: Held[] = [];
    session.onMessage((m) => {
      if (m.type === 'turn_started' && m.payload.continues === turnId) shown.add(m.payload.turn_id);
      if (m.type === 'stream_delta' && shown.has(m.payload.turn_id)) io.output.write(m.payload.text);
      if (m.type === 'approval_requested' && m.payload.turn_id === turnId) held.push(m.payload);
      if (m.type === 'text_response' && shown.has(m.payload.turn_id) && !m.payload.text.endsWith('\n')) io.output.write('\n');
    });
    let answer = await done;
    const ask = (question: string): Promise<string> => {
      const rl = createInterface({ input: io.input, output: io.output, terminal: true });
      return new Promise<string>((resolve) => rl.question(question, resolve)).finally(() => rl.close());
    };
    for (const continued of await settleHeld(conn, session, held, io, ask)) answer = continued;
    return answer.finish_reason === 'error' || answer.finish_reason === 'cancelled' ? 1 : 0;
  } finally {
    await session.close(true);
  }
}

type Held = BrainMessageOf<'approval_requested'>['payload'];

/** How a held call is shown: the tool and its arguments (already scrubbed of vault secrets by the brain), on one line. */
const heldCall = (h: Held): string => `${h.tool_name} ${clip(JSON.stringify(h.args), 300)}`;

/**
 * The tool calls a turn of ours held for approval (spec 3.1). On a terminal each is asked inline —
 * "approve? [y/N]", anything but y/yes rejects — and resolved for this session; the answers of their
 * continuation turns are awaited (their text streams like any turn's). Without a terminal nothing
 * is resolved: each request is printed with the commands that resolve it.
 */
async function settleHeld(conn: Connection, session: ChatSession, held: readonly Held[], io: ChatIo, ask: (question: string) => Promise<string>): Promise<TextResponse[]> {
  const answers: Promise<TextResponse>[] = [];
  for (const h of held) {
    if (!io.interactive) {
      io.errors.write(`svc: ${heldCall(h)} is waiting for your approval (request ${h.request_id}):\n  svc twin approvals approve ${h.request_id}\n  svc twin approvals reject ${h.request_id}\n`);
      continue;
    }
    const reply = (await ask(`${heldCall(h)}\napprove? [y/N] `)).trim().toLowerCase();
    const action = reply === 'y' || reply === 'yes' ? 'approve' : 'reject';
    // Registered before the request is resolved: the continuation may start before the answer arrives.
    const continuation = session.continuation(h.turn_id);
    const r = await callBrain<ApprovalResolution>(conn, 'POST', `/api/approvals/${encodeURIComponent(h.request_id)}/${action}`, { session_id: session.sessionId });
    if (r.status !== 200) {
      continuation.forget();
      io.errors.write(`svc: could not ${action} request ${h.request_id}: ${errorMessage(r.body)}\n`);
      continue;
    }
    if (action === 'reject') io.output.write(`rejected; ${h.tool_name} will not run\n`);
    answers.push(continuation.done);
  }
  return Promise.all(answers);
}

const errorMessage = (body: unknown): string => {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === 'string' ? error.message : JSON.stringify(body);
};

const HELP = `/status    brain status        /devices   connected devices
/skills    tools and skills    /identity  the assistant's name, personality, rules, style
/quit      end the session and leave (Ctrl-D too); Ctrl-C stops a running answer`;

/** svc with no arguments: the interactive chat. */
export async function repl(conn: Connection, io: ChatIo, resume = ''): Promise<number> {
  const session = await ChatSession.connect(conn);
  const opened = await session.open(resume);
  const paint = (style: Parameters<typeof styleText>[0], s: string): string => (io.output.isTTY ? styleText(style, s) : s);
  const render = renderer(io, paint);
  session.onMessage(render.frame);
  io.output.write(paint('dim', `svc chat — session ${opened.session_id}${opened.payload.resumed ? ' (resumed)' : ''}. /help for commands.\n`));
  for (const h of opened.payload.history) io.output.write(`${h.role === 'user' ? '› ' : ''}${h.text}\n`);

  const rl = createInterface({ input: io.input, output: io.output, terminal: io.interactive, prompt: io.interactive ? paint('cyan', '› ') : '' });
  let running: string | null = null;
  rl.on('SIGINT', () => {
    if (running) return session.cancel(running);
    rl.close();
  });
  rl.prompt();
  for await (const raw of rl) {
    const line = raw.trim();
    if (line === '') {
      rl.prompt();
      continue;
    }
    if (line.startsWith('/')) {
      if (line === '/quit' || line === '/exit') break;
      try {
        io.output.write(`${await slashCommand(conn, line)}\n`);
      } catch (err) {
        if (!(err instanceof BrainRefusedError)) throw err;
        io.errors.write(`svc: ${err.message}\n`);
      }
      rl.prompt();
      continue;
    }
    const turn = session.ask(line);
    running = turn.turnId;
    render.own(turn.turnId);
    const held: Held[] = [];
    const hold = (m: BrainMessage): void => {
      if (m.type === 'approval_requested' && m.payload.turn_id === turn.turnId) held.push(m.payload);
    };
    session.onMessage(hold);
    try {
      await turn.done;
      await settleHeld(conn, session, held, io, (question) => new Promise<string>((resolve) => rl.question(question, resolve)));
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      io.errors.write(`svc: ${err.message}\n`);
      if (err.code === 'CLOSED') return 1;
    } finally {
      running = null;
      session.offMessage(hold);
    }
    rl.prompt();
  }
  rl.close();
  await session.close(true);
  return 0;
}

/** Renders session frames: streamed text, tool activity, and turns other clients started. */
function renderer(io: ChatIo, paint: (style: Parameters<typeof styleText>[0], s: string) => string) {
  const mine = new Set<string>();
  let lineOpen = false;
  const write = (s: string): void => {
    io.output.write(s);
    if (s.length > 0) lineOpen = !s.endsWith('\n');
  };
  const newline = (): void => {
    if (lineOpen) write('\n');
  };
  return {
    own: (turnId: string) => mine.add(turnId),
    frame: (m: BrainMessage): void => {
      if (m.type === 'turn_started' && m.payload.continues !== undefined) {
        newline();
        write(paint('dim', `${m.payload.text}\n`));
      } else if (m.type === 'turn_started' && !mine.has(m.payload.turn_id)) {
        newline();
        write(paint('dim', `› ${m.payload.text}  (another client)\n`));
      } else if (m.type === 'stream_delta') {
        write(m.payload.text);
      } else if (m.type === 'tool_call') {
        newline();
        write(paint('dim', `  · ${m.payload.name} ${JSON.stringify(m.payload.arguments)}\n`));
      } else if (m.type === 'approval_requested') {
        newline();
        write(paint('yellow', `  ? ${m.payload.tool_name} needs your approval (request ${m.payload.request_id})\n`));
      } else if (m.type === 'taskflow_update' && (m.payload.step === undefined || m.payload.status !== 'running')) {
        // A flow's own progress lines would flood the chat: its status changes and its steps' endings are shown.
        newline();
        write(paint('dim', `  ⟳ ${m.payload.title} (${m.payload.flow_id}): ${m.payload.status} — ${m.payload.reason}\n`));
      } else if (m.type === 'tool_result' && m.payload.status !== 'ok') {
        write(paint('yellow', `  · ${m.payload.name}: ${m.payload.status}\n`));
      } else if (m.type === 'text_response') {
        newline();
        mine.delete(m.payload.turn_id);
      } else if (m.type === 'session_closed' && m.payload.reason !== 'left') {
        newline();
        write(paint('dim', `session ended (${m.payload.reason})\n`));
      }
    },
  };
}

export async function slashCommand(conn: Connection, line: string): Promise<string> {
  const [cmd] = line.split(/\s+/);
  switch (cmd) {
    case '/help':
      return HELP;
    case '/status': {
      const s = await callBrainOk<DashboardStatus>(conn, 'GET', '/api/dashboard/status');
      return `svc ${s.version}: ${s.status}, up ${Math.round(s.uptime_s)} s; sessions ${s.sessions.open} open (${s.sessions.clients} clients), ${s.sessions.turns_total} turns; provider ${s.provider.id}; devices ${s.devices.connected}`;
    }
    case '/devices': {
      const list = await callBrainOk<ConnectedDeviceList>(conn, 'GET', '/api/devices/connected');
      if (list.devices.length === 0) return 'no hardware devices connected (docs/hardware.md: node-agent run, svc bridge pair)';
      return list.devices.map((d) => `${d.online ? '●' : '○'} ${d.name} (${d.type}, ${d.transport} via ${d.node_id}) ${Object.entries(d.readings).map(([k, r]) => `${k}=${String(r.value)}`).join(' ')}`.trimEnd()).join('\n');
    }
    case '/skills': {
      const s = await callBrainOk<DashboardStatus>(conn, 'GET', '/api/dashboard/status');
      const skills = await callBrain<{ skills?: { name: string }[] } | null>(conn, 'GET', '/api/skills');
      const installed = skills.status === 200 && skills.body?.skills ? skills.body.skills.map((k) => k.name) : [];
      return `built-in tools: ${s.tools.join(', ')}\nskills: ${installed.length > 0 ? installed.join(', ') : 'none installed'}`;
    }
    case '/identity': {
      const soul = await callBrainOk<Soul>(conn, 'GET', '/api/identity/soul');
      return formatSoul(soul);
    }
    default:
      return `unknown command ${cmd ?? ''}; /help lists them`;
  }
}

export const formatSoul = (soul: Pick<Soul, 'name' | 'personality' | 'rules' | 'style'>): string =>
  `name:        ${soul.name}\npersonality: ${soul.personality}\nrules:\n${soul.rules.map((r) => `  - ${r}`).join('\n')}\nstyle:       ${soul.style}`;

export type { TextResponse };
