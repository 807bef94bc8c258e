// Shared by the approvals e2e tests (test/e2e/approvals*.test.ts): the built brain with the fake
// OpenAI server as its only provider, a folder granted for writing, a model that answers by what it is
// asked, a WebSocket session client that waits for frames matching a predicate, and a plain HTTP
// client on a connection of its own (a second client, not the session's).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, tempHome, type BrainProcess, type StartOptions } from '../helpers/brain-process';
import { connect, waitForFrame } from '../helpers/session-client';
import { startOpenAiServer, type FakeReply, type FakeServer, type RecordedRequest } from '../fakes/openai-server';
import type { BrainMessage, BrainMessageOf } from '../../protocol/session';
import type { WebSocket } from 'ws';

/** The text_command that makes the model hold `count` run_command calls, each appending `tag` to runs.log. */
export const holdText = (tag: string, count = 1): string => `HOLD ${count} ${tag}`;

/** What the model answers after the pending tool results (the end of the turn that asked). */
export const WAITING = 'Waiting for your approval.';
/** What the model answers in a continuation turn (a tool result that is not pending). */
export const CONTINUED = 'Here is what became of the held call.';

type Message = { role: string; content?: unknown };

const messagesOf = (req: RecordedRequest): Message[] => (Array.isArray(req.body?.messages) ? (req.body.messages as Message[]) : []);

/**
 * The model, by what it is asked: the knowledge extractor gets no triples; a user message `HOLD n tag`
 * gets n run_command calls; after pending tool results it waits; after any other tool result (a
 * continuation) it answers CONTINUED. Continuation requests are kept in `continuations`.
 */
export function scriptModel(fake: FakeServer, work: string): { continuations: RecordedRequest[] } {
  const continuations: RecordedRequest[] = [];
  let calls = 0;
  fake.reply((req): FakeReply => {
    const messages = messagesOf(req);
    const first = messages[0];
    if (first?.role === 'system' && String(first.content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    const hold = last?.role === 'user' ? /^HOLD (\d+) ([a-z0-9]+)$/.exec(String(last.content)) : null;
    if (hold) {
      const tag = hold[2]!;
      // A tag starting with "slow" keeps running after its line (its pid in <tag>.pid), to be caught mid-run.
      const script = tag.startsWith('slow') ? `echo ${tag} >> runs.log; echo $$ > ${tag}.pid; exec sleep 120` : `echo ${tag} >> runs.log`;
      const args = JSON.stringify({ argv: ['/bin/sh', '-c', script], cwd: work });
      return { kind: 'tool_calls', calls: Array.from({ length: Number(hold[1]) }, () => ({ id: `call_${++calls}`, name: 'run_command', argumentChunks: [args] })) };
    }
    if (last?.role === 'tool' && String(last.content).includes('pending_approval')) return { kind: 'text', chunks: [WAITING] };
    if (last?.role === 'tool') {
      continuations.push(req);
      return { kind: 'text', chunks: ['Here is what ', 'became of the held call.'] };
    }
    return { kind: 'text', chunks: ['Hello from fake'] };
  });
  return { continuations };
}

export interface ApprovalsBrain {
  /** The brain running now (restart() replaces it). */
  brain: BrainProcess;
  /** Stops the brain with `signal` and starts the built brain again on the same home. */
  restart(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  fake: FakeServer;
  home: string;
  /** The folder granted for writing (realpath); run_command runs here and appends to runs.log. */
  work: string;
  continuations: RecordedRequest[];
  /** How many times the held command with this tag ran (lines of runs.log equal to it). */
  ran(tag: string): number;
}

/**
 * Writes settings.json (fake provider first, plus `settings`), starts the brain and grants `work` for
 * writing. The home is removed after the test.
 */
export async function approvalsBrain(t: { after(fn: () => unknown): void }, settings: Record<string, unknown> = {}, opts: Omit<StartOptions, 'home' | 'keepHome'> = {}): Promise<ApprovalsBrain> {
  const fake = await startOpenAiServer();
  const home = tempHome('svc-approvals-e2e-');
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  const real = realpathSync(work);
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] }, ...settings }));
  const { continuations } = scriptModel(fake, real);
  const rig: ApprovalsBrain = {
    brain: await startBrain({ ...opts, home }),
    fake,
    home,
    work: real,
    continuations,
    ran: (tag) => runsLog(real).filter((l) => l === tag).length,
    restart: async (signal) => {
      if (signal === 'SIGKILL') await rig.brain.kill();
      else assert.equal(await rig.brain.stop(signal), 0, 'a clean stop');
      rig.brain = await startBrain({ ...opts, home });
    },
  };
  t.after(async () => {
    await rig.brain.kill();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });
  const granted = await rig.brain.api('/api/grants', { method: 'POST', body: JSON.stringify({ path: real, write: true }) });
  assert.equal(granted.status, 201, await granted.text());
  return rig;
}

/** The lines of runs.log in the granted folder (none before the first command ran). */
function runsLog(work: string): string[] {
  try {
    return readFileSync(join(work, 'runs.log'), 'utf8').split('\n');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export interface Session {
  ws: WebSocket;
  frames: BrainMessage[];
  id: string;
  /** The first frame (already received or still to come) from index `from` on that matches. */
  waitFor<T extends BrainMessage['type']>(type: T, match?: (m: BrainMessageOf<T>) => boolean, from?: number): Promise<BrainMessageOf<T>>;
  /** Sends a text_command and resolves with the held requests and the turn's text_response. */
  hold(tag: string, count?: number): Promise<{ held: BrainMessageOf<'approval_requested'>[]; response: BrainMessageOf<'text_response'> }>;
}

/** A /v1/session client; its session is opened by the first text_command. */
export async function session(t: { after(fn: () => unknown): void }, brain: BrainProcess): Promise<Session> {
  const { ws, frames } = await connect(brain);
  t.after(() => ws.close());
  const s: Session = {
    ws,
    frames,
    id: '',
    waitFor: (type, match, from) => waitForFrame(ws, frames, type, match, from),
    hold: async (tag, count = 1) => {
      const from = frames.length;
      const text = holdText(tag, count);
      ws.send(JSON.stringify({ type: 'text_command', session_id: s.id, payload: { text } }));
      // Matched by turn: a continuation of an earlier call may still be answering in this session.
      const started = await s.waitFor('turn_started', (m) => m.payload.text === text, from);
      const turnId = started.payload.turn_id;
      const response = await s.waitFor('text_response', (m) => m.payload.turn_id === turnId, from);
      s.id = response.session_id;
      assert.equal(response.payload.text, WAITING, 'the turn that asked ends waiting');
      const held = frames.slice(from).filter((f): f is BrainMessageOf<'approval_requested'> => f.type === 'approval_requested' && f.payload.turn_id === turnId);
      assert.equal(held.length, count, `${count} held calls: ${JSON.stringify(frames.slice(from).map((f) => f.type))}`);
      return { held, response };
    },
  };
  return s;
}

export interface PlainResponse {
  status: number;
  body: unknown;
}

/** One HTTP request on a connection of its own (agent: false, Connection: close): a second client. */
export function plainRequest(brain: BrainProcess, method: string, path: string, body?: unknown): Promise<PlainResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: brain.port, method, path, agent: false, headers: { authorization: `Bearer ${brain.token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export const approve = (brain: BrainProcess, id: string, body?: unknown) => plainRequest(brain, 'POST', `/api/approvals/${encodeURIComponent(id)}/approve`, body);
export const reject = (brain: BrainProcess, id: string, body?: unknown) => plainRequest(brain, 'POST', `/api/approvals/${encodeURIComponent(id)}/reject`, body);

/** The error envelope's code and details (spec 7). */
export function envelope(r: PlainResponse): { code: string; message: string; details: unknown } {
  const e = (r.body as { error?: { code: string; message: string; details: unknown } }).error;
  assert.ok(e, `an error envelope: ${JSON.stringify(r.body)}`);
  return e;
}
