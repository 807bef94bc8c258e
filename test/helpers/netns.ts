// A network namespace linked to this process by a veth pair on a private test subnet, and the built
// brain started inside it: how the e2e tests reach the brain from off loopback without touching the
// machine's own network (10.<block>.N.0/30 and fd<block-200>:<block>:N::/64, N from the pid; blocks
// are 2xx, one per test file). Needs root.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { BRAIN_ENV, BRAIN_NODE_FLAGS } from '../../cli/brain-runtime';
import { SVC } from './brain-process';
import { runTool, runToolOk } from './external-tools';

export interface VethPlan {
  ns: string;
  hostIf: string;
  nsIf: string;
  hostV4: string;
  nsV4: string;
  hostV6: string;
  nsV6: string;
}

/** The names and addresses of one test's namespace: `tag` names it, `block` (a number of its own per test file) its subnet. */
export function vethPlan(tag: string, block: number): VethPlan {
  const n = (process.pid % 200) + 20;
  const letter = tag[0]!;
  return {
    ns: `svc-${tag}-${process.pid}`,
    hostIf: `svc${letter}${process.pid}h`,
    nsIf: `svc${letter}${process.pid}n`,
    hostV4: `10.${block}.${n}.1`,
    nsV4: `10.${block}.${n}.2`,
    hostV6: `fd${block - 200}:${block}:${n}::1`,
    nsV6: `fd${block - 200}:${block}:${n}::2`,
  };
}

/** Creates the namespace and its veth pair (IPv4 /30 and IPv6 /64 on both ends, loopback up); refuses a subnet already in use here. */
export async function createVethNamespace(plan: VethPlan): Promise<void> {
  const v4Net = plan.hostV4.replace(/\.1$/, '.');
  const v6Net = plan.hostV6.replace(/::1$/, ':');
  const taken = (await runToolOk('ip', ['-o', 'addr'])).stdout;
  assert.ok(!taken.includes(v4Net) && !taken.includes(v6Net), `test subnet ${v4Net}0/30 is already in use here:\n${taken}`);
  await runTool('ip', ['netns', 'del', plan.ns]); // a namespace left by a killed run with the same pid
  const steps: string[][] = [
    ['netns', 'add', plan.ns],
    ['link', 'add', plan.hostIf, 'type', 'veth', 'peer', 'name', plan.nsIf],
    ['link', 'set', plan.nsIf, 'netns', plan.ns],
    ['addr', 'add', `${plan.hostV4}/30`, 'dev', plan.hostIf],
    ['addr', 'add', `${plan.hostV6}/64`, 'dev', plan.hostIf, 'nodad'],
    ['link', 'set', plan.hostIf, 'up'],
    ['-n', plan.ns, 'addr', 'add', `${plan.nsV4}/30`, 'dev', plan.nsIf],
    ['-n', plan.ns, 'addr', 'add', `${plan.nsV6}/64`, 'dev', plan.nsIf, 'nodad'],
    ['-n', plan.ns, 'link', 'set', plan.nsIf, 'up'],
    ['-n', plan.ns, 'link', 'set', 'lo', 'up'],
  ];
  for (const args of steps) await runToolOk('ip', args);
}

export const deleteNamespace = (plan: VethPlan): Promise<unknown> => runTool('ip', ['netns', 'del', plan.ns]);

export interface NamespacedBrain {
  port: number;
  stop(): Promise<void>;
}

/** What startBrainInNamespace gives: the brain, its pid, a crash on demand and its output. */
export interface NamespacedBrainProcess extends NamespacedBrain {
  /** The brain's own pid (`ip netns exec` execs it, so the spawned process is the brain). */
  pid: number;
  /** SIGKILL to the brain itself, and wait for it to exit: a crash, no shutdown. */
  kill(): Promise<void>;
  /** Everything it wrote so far (pino JSON lines on stdout, anything on stderr). */
  output(): string;
}

/** The brain's pid: the spawned process when `ip netns exec` exec'd node (it does unless batch mode), else its one child. */
function brainPid(spawned: number): number {
  if (readFileSync(`/proc/${spawned}/cmdline`, 'utf8').includes(SVC)) return spawned;
  const children = readFileSync(`/proc/${spawned}/task/${spawned}/children`, 'utf8').trim().split(/\s+/).map(Number);
  assert.equal(children.length, 1, `ip netns exec (pid ${spawned}) runs one brain: ${children.join(', ')}`);
  return children[0]!;
}

/**
 * dist/svc.mjs serve inside `ns` on an ephemeral port with `home` as SVC_HOME; resolves with the port
 * from its "listening" log line. `runtime`: launched as `svc start` launches it (brain-runtime flags and
 * environment); `args` are serve's (e.g. --host ::); `port` is 0 (ephemeral) unless given (a namespace has ports of its own).
 */
export async function startBrainInNamespace(ns: string, opts: { home: string; args?: string[]; env?: NodeJS.ProcessEnv; runtime?: boolean; port?: number }): Promise<NamespacedBrainProcess> {
  const flags = opts.runtime === false ? [] : BRAIN_NODE_FLAGS;
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...flags, SVC, 'serve', '--port', String(opts.port ?? 0), ...(opts.args ?? [])], {
    env: { ...(opts.env ?? process.env), ...(opts.runtime === false ? {} : BRAIN_ENV), SVC_HOME: opts.home, SVC_LOG_LEVEL: 'info', SVC_API_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`brain did not listen within 15 s\n${output}`)), 15_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        output += `${line}\n`;
        const m = /"msg":"svc brain listening on http:\/\/[^"]*:(\d+)"/.exec(line);
        if (!m) return;
        clearTimeout(timer);
        resolve(Number(m[1]));
      });
      void exited.then(() => reject(new Error(`brain exited before listening\n${output}`)));
    });
    const pid = brainPid(child.pid!);
    const kill = async (): Promise<void> => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
      await exited;
    };
    return { port, pid, stop, kill, output: () => output };
  } catch (err) {
    await stop();
    throw err;
  }
}
