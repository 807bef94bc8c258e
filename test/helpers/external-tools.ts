// Running the system tools the operational tests drive (promtool, systemd-analyze, ip, socat), and
// finding the repository root from a compiled test at any depth of .test-build/.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory holding svc's package.json, searched upwards from the running (compiled) test. */
export function repoRoot(from: string = import.meta.dirname): string {
  let dir = from;
  for (let i = 0; i < 12; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'svc') return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`no svc package.json above ${from}`);
}

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (bounded by timeoutMs) and collects its output; never throws on exit codes. */
export function runTool(command: string, args: readonly string[], opts: { input?: string; cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 30_000} ms`));
    }, opts.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (child.stdin) {
      // A tool may exit without reading its input (EPIPE); its exit code says what happened.
      child.stdin.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') reject(err);
      });
      child.stdin.end(opts.input);
    }
  });
}

/** Like runTool, but a non-zero exit is an error carrying the tool's output. */
export async function runToolOk(command: string, args: readonly string[], opts: Parameters<typeof runTool>[2] = {}): Promise<ToolResult> {
  const r = await runTool(command, args, opts);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${r.code}\n${r.stdout}${r.stderr}`);
  return r;
}

export const isRoot = (): boolean => process.getuid?.() === 0;
