// The file tools wired to real checkpoints on a temp home and a temp granted folder, without a brain:
// shared by the checkpoint tests. `snapshot` captures a tree byte for byte (content, kind, mode).
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Checkpoints, type CheckpointLimits } from '../../../daemon/files/checkpoints';
import { fileTools } from '../../../daemon/files/file-tools';
import { runCommandTool } from '../../../daemon/files/run-command';
import type { Tool, ToolOutcome } from '../../../daemon/kernel/tool';

export interface Rig {
  home: string;
  tree: string;
  checkpoints: Checkpoints;
  /** Runs a tool as the agent would in turn `turn`. */
  call(name: string, args: Record<string, unknown>, turn?: string): Promise<ToolOutcome>;
  /** Epoch ms the checkpoints' clock reads (settable). */
  clock: { ms: number };
}

export function checkpointRig(t: { after(fn: () => unknown): void }, limits: Partial<CheckpointLimits> = {}, waitMs?: number): Rig {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'svc-checkpoints-')));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const tree = join(root, 'tree');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(tree);
  const clock = { ms: Date.parse('2026-01-01T00:00:00Z') };
  const checkpoints = new Checkpoints({ home, clock: { now: () => clock.ms }, logger: pino({ level: 'silent' }), limits, ...(waitMs === undefined ? {} : { waitMs }) });
  const grants = () => [{ path: tree, mode: 'write' as const, expiresAt: null }];
  const tools = new Map<string, Tool>([...fileTools({ grants, checkpoints }), runCommandTool({ grants, secrets: () => [], checkpoints })].map((tool) => [tool.spec.name, tool]));
  const call = (name: string, args: Record<string, unknown>, turn = 'turn-1'): Promise<ToolOutcome> =>
    tools.get(name)!.run(args, { sessionId: 'session-1', turnId: turn, specialist: 'general', signal: new AbortController().signal });
  return { home, tree, checkpoints, call, clock };
}

export type Tree = Record<string, { kind: 'file'; content: string; mode: number } | { kind: 'directory'; mode: number }>;

/** Every entry under `dir` (relative paths), with file contents (base64) and modes. */
export function snapshot(dir: string, prefix = ''): Tree {
  const out: Tree = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const rel = prefix + name;
    const st = lstatSync(path);
    if (st.isDirectory()) {
      out[rel] = { kind: 'directory', mode: st.mode & 0o7777 };
      Object.assign(out, snapshot(path, `${rel}/`));
    } else out[rel] = { kind: 'file', content: readFileSync(path).toString('base64'), mode: st.mode & 0o7777 };
  }
  return out;
}
