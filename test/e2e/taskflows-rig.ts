// Shared by the TaskFlows durability e2e tests (test/e2e/taskflows-durability.test.ts): the built brain on
// a home that survives kill -9 and restarts, a folder granted for writing, and an effect log outside the
// brain's home that an effectful step (run_command) appends its own tag to — so a line count per tag
// proves how many times that step really ran. Also: the timeline checks (every history a chain of
// transitions flow-machine.ts allows) and the concurrency read off the flows' own histories.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { canFlow, canStep } from '../../daemon/taskflows/flow-machine';
import type { CreateTaskflow, FlowStatus, Step, StepSpec, StepStatus, Taskflow, TaskflowList } from '../../protocol/taskflows';

export interface FlowsBrain {
  /** The brain running now (restart() and crash() replace it). */
  brain: BrainProcess;
  home: string;
  /** The folder granted for writing (realpath), where run_command runs and read-only steps read. */
  work: string;
  /** The effect log, outside the brain's home. */
  log: string;
  /** kill -9 the brain and every effect process it left (a power cut), then start it again on the same home. */
  crash(): Promise<void>;
  /** kill -9 only, without restarting (start() brings it back). */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** SIGTERM, a clean exit, and a start on the same home. */
  restart(): Promise<void>;
  /** How many lines of the effect log are exactly `tag`. */
  ran(tag: string): number;
}

/**
 * A brain with `settings` (run_command needs no approval here), `work` granted for writing and holding
 * readme.txt. The home and the effect folder are removed after the test.
 */
export async function flowsBrain(t: { after(fn: () => unknown): void }, settings: Record<string, unknown> = {}): Promise<FlowsBrain> {
  const home = tempHome('svc-taskflows-durability-');
  const outside = realpathSync(tempHome('svc-taskflows-effects-'));
  const work = join(outside, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'readme.txt'), 'plants: water on Sundays\n');
  const log = join(outside, 'effects.log');
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ approvals: { tools: { run_command: 'auto' } }, ...settings }));
  let started: BrainProcess | null = null;
  // Registered before the first start, so a brain that fails to start leaves no folders behind.
  t.after(async () => {
    await started?.kill();
    await killEffects(log);
    rmSync(home, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const rig: FlowsBrain = {
    brain: (started = await startBrain({ home })),
    home,
    work,
    log,
    kill: async () => {
      await rig.brain.kill();
      await killEffects(log);
    },
    start: async () => {
      rig.brain = started = await startBrain({ home });
    },
    crash: async () => {
      await rig.kill();
      await rig.start();
    },
    restart: async () => {
      assert.equal(await rig.brain.stop('SIGTERM'), 0, 'a clean stop');
      rig.brain = started = await startBrain({ home });
    },
    ran: (tag) => effectLines(log).filter((l) => l === tag).length,
  };
  const granted = await rig.brain.api('/api/grants', { method: 'POST', body: JSON.stringify({ path: work, write: true }) });
  assert.equal(granted.status, 201, await granted.text());
  return rig;
}

/** The lines of the effect log (none before the first effect). */
export function effectLines(log: string): string[] {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * Processes whose command line names `marker` (the effect log): the shells run_command started. Each is
 * the leader of its own process group (run-command.ts), so the group is what is killed.
 */
function effectPids(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES') continue; // it ended meanwhile, or is not ours
      throw err;
    }
    if (cmdline.includes(marker)) pids.push(Number(name));
  }
  return pids;
}

/**
 * After kill -9 the brain's effect processes live on (their own groups); a power cut would end them
 * too. They are killed by process group and waited for, so the effect log no longer changes.
 */
async function killEffects(marker: string): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const pids = effectPids(marker);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`effect processes still alive: ${effectPids(marker).join(', ')}`);
}

/** A request with a JSON body (or none); the status and parsed body. */
export async function call<T>(brain: BrainProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: r.status, body: (await r.json()) as T };
}

export async function createFlow(brain: BrainProcess, flow: CreateTaskflow): Promise<Taskflow> {
  const r = await call<Taskflow>(brain, 'POST', '/api/taskflows', flow);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

export async function getFlow(brain: BrainProcess, id: string): Promise<Taskflow> {
  const r = await call<Taskflow>(brain, 'GET', `/api/taskflows/${id}`);
  assert.equal(r.status, 200, `${id} is still there: ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function listFlows(brain: BrainProcess, status?: FlowStatus): Promise<TaskflowList> {
  const r = await call<TaskflowList>(brain, 'GET', `/api/taskflows?limit=500${status ? `&status=${status}` : ''}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The run_command step that appends `tag` to `log` once, between two short pauses (so a kill can land before or after it). */
export function effectStep(work: string, log: string, tag: string, before: number, after: number): StepSpec {
  return { type: 'tool', tool: 'run_command', args: { argv: ['/bin/sh', '-c', `sleep ${before}; echo ${tag} >> '${log}'; sleep ${after}`], cwd: work } };
}

/** The tag an effectful step appends, or null for a read-only step. */
export function tagOf(step: Pick<Step, 'input'>): string | null {
  if (step.input.type !== 'tool' || step.input.tool !== 'run_command') return null;
  const argv = step.input.args?.argv as string[];
  return /echo (\S+) >>/.exec(argv[2]!)![1]!;
}

/**
 * The flow's timeline and each step's are chains: the first flow transition comes from nothing, a
 * step's first from pending; each `from` is the previous `to`; times never go back; every transition
 * is one flow-machine.ts allows; the last `to` is the status now.
 */
export function assertTimeline(flow: Taskflow): void {
  const where = `${flow.id} (${flow.title})`;
  const h = flow.history;
  assert.ok(h.length > 0, `${where}: a flow history`);
  assert.equal(h[0]!.from, null, `${where}: the first transition comes from nothing`);
  assert.ok(h[0]!.to === 'queued' || h[0]!.to === 'waiting', `${where}: created ${h[0]!.to}`);
  for (let i = 1; i < h.length; i++) {
    const [prev, cur] = [h[i - 1]!, h[i]!];
    assert.equal(cur.from, prev.to, `${where}: transition ${i} starts where ${i - 1} ended: ${JSON.stringify(h)}`);
    assert.ok(canFlow(cur.from as FlowStatus, cur.to as FlowStatus), `${where}: ${cur.from} → ${cur.to} is allowed`);
    assert.ok(cur.at >= prev.at, `${where}: times do not go back at flow transition ${i}`);
  }
  assert.equal(h.at(-1)!.to, flow.status, `${where}: the last transition is the status`);
  for (const step of flow.steps) {
    const sh = step.history;
    const at = `${where} step ${step.index}`;
    if (sh.length === 0) {
      assert.equal(step.status, 'pending', `${at}: no history, so never left pending`);
      continue;
    }
    assert.equal(sh[0]!.from, 'pending', `${at}: starts pending`);
    for (let i = 0; i < sh.length; i++) {
      const cur = sh[i]!;
      if (i > 0) assert.equal(cur.from, sh[i - 1]!.to, `${at}: transition ${i} starts where ${i - 1} ended: ${JSON.stringify(sh)}`);
      if (i > 0) assert.ok(cur.at >= sh[i - 1]!.at, `${at}: times do not go back at transition ${i}`);
      assert.ok(canStep(cur.from as StepStatus, cur.to as StepStatus), `${at}: ${cur.from} → ${cur.to} is allowed`);
      assert.ok(cur.at >= h[0]!.at, `${at}: after its flow was created`);
    }
    assert.equal(sh.at(-1)!.to, step.status, `${at}: the last transition is the status`);
  }
}

/**
 * The most flows `running` at one moment, from their histories: each transition into running opens an
 * interval, each out of it closes one; at the same instant a close counts before an open (the engine
 * starts a queued flow only after another left running).
 */
export function mostRunning(flows: readonly Taskflow[]): number {
  const edges = flows.flatMap((f) => f.history.flatMap((t) => [...(t.to === 'running' ? [{ at: t.at, d: 1 }] : []), ...(t.from === 'running' ? [{ at: t.at, d: -1 }] : [])]));
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}

export { seeded } from '../helpers/prng';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
