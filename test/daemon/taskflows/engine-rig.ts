// The TaskFlow engine on real parts for its unit tests: a SQLite store file in a temp folder, the real
// tool registry with three tools (read_temp passive, append_line active — it appends to a real file —,
// reboot privileged), the brain's bus, a permission hook the test sets, and a conversation port that
// answers from a script. `restart()` stops the engine and starts a new one on the same file, as a
// brain restart does (a crash is staged by writing the state a kill -9 leaves into the store first).
// `crash()` is a kill -9: the writes of the current group commit are lost, the old engine never hears
// another acknowledgement (so it acts no more), and a new engine starts on the same file.
import { mkdtempSync, readFileSync, rmSync, existsSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Type } from '@sinclair/typebox';
import { Writable } from 'node:stream';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import type { Db, Store } from '../../../daemon/store/store';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { defineTool, ToolFailure } from '../../../daemon/kernel/tool';
import { PermissionPlane, type PermissionHook } from '../../../daemon/kernel/permissions';
import type { ConversationPort } from '../../../daemon/kernel/capability';
import type { AgentMemory } from '../../../daemon/kernel/ports';
import { FlowStore, TASKFLOW_MIGRATIONS } from '../../../daemon/taskflows/flow-store';
import { TaskflowEngine } from '../../../daemon/taskflows/flow-engine';
import type { Taskflow } from '../../../protocol/taskflows';

export interface EngineRig {
  engine: TaskflowEngine;
  store: FlowStore;
  bus: EventBus<BrainEvent>;
  events: Extract<BrainEvent, { type: 'taskflow_update' }>[];
  permissions: PermissionPlane;
  prompts: { sessionId: string; text: string; tools: boolean }[];
  notes: string[];
  /** Lines append_line wrote (the effect outside the brain). */
  lines(): string[];
  temp: { value: number };
  /** What the engine logged at error (a bug inside it, or a store gone under it). */
  errors: string[];
  /** Resolves when flow `id` reaches one of `statuses` (checked after every announced change). */
  until(id: string, ...statuses: Taskflow['status'][]): Promise<Taskflow>;
  restart(settings?: { max_running?: number }): Promise<void>;
  /** Kills the engine (see above) and starts a new one on the same file. */
  crash(settings?: { max_running?: number }): Promise<void>;
  /** Stops the engine and removes the folder (also done after the test). */
  close(): Promise<void>;
}

export interface RigOptions {
  max_running?: number;
  answer?: (text: string) => string | Promise<string>;
  /** Called by append_line just before its effect, with the call's turn id and line. */
  onAppend?: (turnId: string, line: string) => void;
  /** append_line, read_temp and prompts take three event-loop turns before and after their work (more interleavings). */
  slowTools?: boolean;
  /** The folder to make the store's folder in (default the system's temp folder). */
  parent?: string;
}

export async function engineRig(t: { after(fn: () => unknown): void }, opts: RigOptions = {}): Promise<EngineRig> {
  const dir = mkdtempSync(join(opts.parent ?? tmpdir(), 'svc-taskflows-'));
  const file = join(dir, 'lines.txt');
  // Errors inside the engine are bugs: they are printed and kept in `errors` for tests to assert on.
  const errors: string[] = [];
  const logger = pino(
    { level: 'error' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        errors.push(chunk.toString());
        process.stderr.write(chunk);
        done();
      },
    }),
  );
  const temp = { value: 17 };
  const tools = new ToolRegistry();
  // A killed brain does nothing more: a tool of an engine that crashed meanwhile never continues.
  const turn = async (): Promise<void> => {
    if (!opts.slowTools) return;
    const mine = life;
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    if (mine.dead) await new Promise<never>(() => undefined);
  };
  tools.register(
    'rig',
    defineTool({
      spec: { name: 'read_temp', description: 'Reads the temperature.', parameters: Type.Object({}) },
      safety: 'passive',
      run: async () => {
        await turn();
        return { summary: `${temp.value} °C`, data: { temp: temp.value } };
      },
    }),
  );
  tools.register(
    'rig',
    defineTool({
      spec: { name: 'append_line', description: 'Appends a line to a file.', parameters: Type.Object({ line: Type.String() }) },
      safety: 'active',
      run: async ({ line }, context) => {
        await turn();
        if (line === 'fail') throw new ToolFailure('asked to fail');
        opts.onAppend?.(context.turnId, line);
        appendFileSync(file, `${line}\n`);
        await turn();
        return { summary: `appended ${line}` };
      },
    }),
  );
  tools.register('rig', defineTool({ spec: { name: 'reboot', description: 'Reboots.', parameters: Type.Object({}) }, safety: 'privileged', run: async () => ({ summary: 'rebooting' }) }));
  const bus = new EventBus<BrainEvent>((_owner, err) => {
    throw err;
  });
  const events: EngineRig['events'] = [];
  const waiters: { id: string; statuses: Taskflow['status'][]; resolve: (f: Taskflow) => void }[] = [];
  bus.on('test', (e) => {
    if (e.type !== 'taskflow_update') return;
    events.push(e);
    for (const w of [...waiters]) {
      if (w.id !== e.flowId || !w.statuses.includes(e.status)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(rig.store.get(e.flowId)!);
    }
  });
  const permissions = new PermissionPlane();
  const prompts: EngineRig['prompts'] = [];
  const notes: string[] = [];
  const conversations: ConversationPort = {
    prompt: async (request) => {
      prompts.push({ sessionId: request.sessionId, text: request.text, tools: request.tools });
      await turn();
      const text = opts.answer ? await opts.answer(request.text) : `answer to ${request.text}`;
      // A turn whose signal fired ends as cancelled, as the agent's does.
      return { text, finishReason: request.signal.aborted ? 'cancelled' : 'stop', sessionId: request.sessionId };
    },
    // No session is open here; taskflows-capability.test.ts checks the frames a session's clients get.
    tell: () => false,
  };
  const memory = { remember: async (text: string) => (notes.push(text), { id: `note_${notes.length}`, text }) } as unknown as AgentMemory;
  let sqlite: SqliteStore;
  let life: Life;
  const open = (max: number): { store: FlowStore; engine: TaskflowEngine } => {
    sqlite = new SqliteStore(join(dir, 'brain.db'));
    sqlite.migrate('taskflows', TASKFLOW_MIGRATIONS);
    life = { dead: false, unacknowledged: 0 };
    const store = new FlowStore(mortal(sqlite, life), { now: () => Date.now() });
    const engine = new TaskflowEngine({ store, tools, permissions, conversations, memory, bus, clock: { now: () => Date.now() }, logger, settings: { max_running: max, retention_days: 30 }, defaultSession: 'dashboard' });
    return { store, engine };
  };
  const first = open(opts.max_running ?? 4);
  const rig: EngineRig = {
    ...first,
    bus,
    events,
    permissions,
    prompts,
    notes,
    temp,
    errors,
    lines: () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []),
    until: (id, ...statuses) =>
      new Promise((resolve) => {
        const now = rig.store.get(id);
        if (now && statuses.includes(now.status)) return resolve(now);
        waiters.push({ id, statuses, resolve });
      }),
    restart: async (settings = {}) => {
      await rig.engine.stop();
      sqlite.close();
      Object.assign(rig, open(settings.max_running ?? opts.max_running ?? 4));
      await rig.engine.start();
    },
    crash: async (settings = {}) => {
      life.dead = true;
      // The open group commit never reached the disk.
      if (life.unacknowledged > 0) sqlite.exec('ROLLBACK');
      // Only its timers and bus listener go; it is never awaited (its drives wait for writes that never return).
      void rig.engine.stop();
      sqlite.close();
      Object.assign(rig, open(settings.max_running ?? opts.max_running ?? 4));
      await rig.engine.start();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      if (!life.dead) await rig.engine.stop();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  let closed = false;
  await rig.engine.start();
  t.after(() => rig.close());
  return rig;
}

interface Life {
  dead: boolean;
  /** Writes applied but not yet committed (the current group commit). */
  unacknowledged: number;
}

/** The store as a process sees it: once dead, no write returns (the writer was killed waiting for it). */
function mortal(store: SqliteStore, life: Life): Store {
  const never = new Promise<never>(() => undefined);
  return {
    path: store.path,
    run: (sql, params) => store.run(sql, params),
    get: (sql, params) => store.get(sql, params),
    all: (sql, params) => store.all(sql, params),
    migrate: (component, migrations) => store.migrate(component, migrations),
    close: () => store.close(),
    write: <T>(fn: (db: Db) => T): Promise<T> => {
      if (life.dead) return never;
      life.unacknowledged++;
      return store.write(fn).then(
        (value) => {
          life.unacknowledged--;
          return life.dead ? never : value;
        },
        (err: unknown) => {
          life.unacknowledged--;
          return life.dead ? never : Promise.reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    },
  };
}

/** A hook that holds every call of `tools` for approval and allows the rest (what the approvals capability does with "ask"). */
export function holding(tools: string[], requests: { id: string; tool: string }[]): PermissionHook {
  let n = 0;
  return {
    check: (request) => {
      if (!tools.includes(request.tool)) return { verdict: 'allow' };
      const id = `apr_${++n}`;
      requests.push({ id, tool: request.tool });
      return { verdict: 'pending', requestId: id, reason: 'held' };
    },
  };
}
