// svc (REPL) and svc '<message>' (one-shot), spec 4.14: chat with the brain over /v1/session with
// streaming output. The REPL keeps one session open; /quit ends it (its episode is written).
import { createInterface } from 'node:readline';
import { styleText } from 'node:util';
import type { BrainMessage } from '../../protocol/session';
import type { DashboardStatus } from '../../protocol/dashboard';
import type { Soul } from '../../protocol/identity';
import { BrainRefusedError, callBrain, callBrainOk, type Connection } from '../connection';
import { ChatSession, SessionError, type TextResponse } from './chat-session';

export interface ChatIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
  errors: NodeJS.WritableStream;
  interactive: boolean;
}

/** svc '<message>': prints the streamed answer; exit 0 when the turn ended normally. */
export async function oneShot(conn: Connection, text: string, io: ChatIo): Promise<number> {
  const session = await ChatSession.connect(conn);
  try {
    await session.open();
    const { turnId, done } = session.ask(text);
    session.onMessage((m) => {
      if (m.type === 'stream_delta' && m.payload.turn_id === turnId) io.output.write(m.payload.text);
    });
    const answer = await done;
    io.output.write(answer.text.endsWith('\n') ? '' : '\n');
    return answer.finish_reason === 'error' || answer.finish_reason === 'cancelled' ? 1 : 0;
  } finally {
    await session.close(true);
  }
}

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
    try {
      await turn.done;
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      io.errors.write(`svc: ${err.message}\n`);
      if (err.code === 'CLOSED') return 1;
    } finally {
      running = null;
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
      if (m.type === 'turn_started' && !mine.has(m.payload.turn_id)) {
        newline();
        write(paint('dim', `› ${m.payload.text}  (another client)\n`));
      } else if (m.type === 'stream_delta') {
        write(m.payload.text);
      } else if (m.type === 'tool_call') {
        newline();
        write(paint('dim', `  · ${m.payload.name} ${JSON.stringify(m.payload.arguments)}\n`));
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
      const s = await callBrainOk<DashboardStatus>(conn, 'GET', '/api/dashboard/status');
      // Pairing arrives with the node-agent's hardware link; until then no command pairs a device.
      if (s.devices.items.length === 0) return 'no devices connected (this version of svc cannot pair devices yet)';
      return s.devices.items.map((d) => `${d.online ? '●' : '○'} ${d.name} (${d.kind}) ${JSON.stringify(d.state)}`).join('\n');
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
