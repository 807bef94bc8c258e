// The Tailscale CLI, as remote mode uses it (docs/access.md "Remote"): `tailscale status --json` says
// whether the daemon runs and is signed in, `tailscale serve --bg --yes <target>` proxies HTTPS on the
// tailnet (https://<machine>.<tailnet>.ts.net, port 443) to the brain, and `tailscale serve --https=443
// off` takes that away. Every failure becomes a TailscaleError naming its reason and the fix, read
// from what the CLI prints (the wording of tailscale 1.52 and later).
import { spawn } from 'node:child_process';
import type { TunnelFailure } from '../../protocol/access';

export interface TailscaleFailure {
  reason: TunnelFailure;
  message: string;
  fix: string;
}

export class TailscaleError extends Error {
  constructor(readonly failure: TailscaleFailure) {
    super(failure.message);
    this.name = 'TailscaleError';
  }
}

export interface TailscaleOptions {
  /** The CLI: a name looked up on PATH or an absolute path. */
  executable: string;
  /** One CLI call at most this long (serve waits on the network). */
  timeoutMs: number;
  /** The user the brain runs as, named in the operator fix. */
  user: string;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The output matched `stopOn` and the CLI was stopped there (it waits for a browser otherwise). */
  stopped: RegExpExecArray | null;
}

const INSTALL = 'install Tailscale (curl -fsSL https://tailscale.com/install.sh | sh), sign in with `sudo tailscale up`, then run `svc access remote-up` again';
/** tailscale serve, when the tailnet has not turned Serve (HTTPS certificates) on, prints this and waits. */
const ENABLE = /To enable, visit:\s+(https:\/\/\S+)/;

export class TailscaleCli {
  constructor(private readonly options: TailscaleOptions) {}

  /** The machine's tailnet name (host.tailnet.ts.net) when the daemon runs and is signed in. */
  async machine(): Promise<string> {
    const r = await this.run(['status', '--json']);
    if (r.code !== 0) throw this.classify(`${r.stderr}\n${r.stdout}`);
    let status: { BackendState?: unknown; Self?: { DNSName?: unknown } };
    try {
      status = JSON.parse(r.stdout) as typeof status;
    } catch {
      throw new TailscaleError({ reason: 'failed', message: `tailscale status --json printed something that is not JSON: ${clip(r.stdout)}`, fix: 'check the Tailscale installation with `tailscale status`' });
    }
    const state = typeof status.BackendState === 'string' ? status.BackendState : 'unknown';
    if (state !== 'Running') {
      throw new TailscaleError({ reason: 'logged_out', message: `Tailscale is not connected (state ${state})`, fix: 'connect this machine to your tailnet: `sudo tailscale up`, then run `svc access remote-up` again' });
    }
    const name = typeof status.Self?.DNSName === 'string' ? status.Self.DNSName.replace(/\.$/, '') : '';
    if (name === '') throw new TailscaleError({ reason: 'failed', message: 'Tailscale gave this machine no DNS name', fix: 'turn MagicDNS on in the Tailscale admin console (DNS page)' });
    return name;
  }

  /** Serves `target` (http://127.0.0.1:<port>) on the tailnet; resolves with the tunnel's base URL. */
  async serve(target: string): Promise<string> {
    const machine = await this.machine();
    const r = await this.run(['serve', '--bg', '--yes', target], ENABLE);
    if (r.stopped) {
      throw new TailscaleError({ reason: 'serve_not_enabled', message: 'Tailscale Serve is not enabled on this tailnet', fix: `open ${r.stopped[1]} to enable Serve (HTTPS certificates), then run \`svc access remote-up\` again` });
    }
    if (r.code !== 0) throw this.classify(`${r.stderr}\n${r.stdout}`);
    const printed = /^(https:\/\/[^\s/]+)\/?\s*$/m.exec(r.stdout)?.[1];
    return printed ?? `https://${machine}`;
  }

  /** Stops serving on the tailnet's HTTPS port. */
  async unserve(): Promise<void> {
    const r = await this.run(['serve', '--https=443', 'off']);
    if (r.code !== 0) throw this.classify(`${r.stderr}\n${r.stdout}`);
  }

  private classify(output: string): TailscaleError {
    const said = clip(output.trim());
    if (/failed to connect to local tailscaled|doesn't appear to be running/i.test(output)) {
      return new TailscaleError({ reason: 'daemon_not_running', message: `the Tailscale daemon is not running: ${said}`, fix: 'start it with `sudo systemctl enable --now tailscaled`, sign in with `sudo tailscale up`, then run `svc access remote-up` again' });
    }
    if (/access denied|permission denied/i.test(output)) {
      return new TailscaleError({ reason: 'permission_denied', message: `Tailscale refused the brain's user: ${said}`, fix: `let the brain's user configure Serve once: \`sudo tailscale set --operator=${this.options.user}\`` });
    }
    if (/not logged in|NeedsLogin|logged out/i.test(output)) {
      return new TailscaleError({ reason: 'logged_out', message: `Tailscale is not signed in: ${said}`, fix: 'sign this machine in: `sudo tailscale up`, then run `svc access remote-up` again' });
    }
    return new TailscaleError({ reason: 'failed', message: `tailscale failed: ${said}`, fix: '`tailscale serve status` shows what is served; `tailscale status` whether this machine is connected' });
  }

  /** Runs the CLI; a missing CLI is a TailscaleError, a CLI that outlives timeoutMs is killed. */
  private run(args: string[], stopOn?: RegExp): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.executable, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let stopped: RegExpExecArray | null = null;
      const timer = setTimeout(() => child.kill('SIGKILL'), this.options.timeoutMs);
      const watch = (): void => {
        if (!stopOn || stopped) return;
        stopped = stopOn.exec(`${stdout}\n${stderr}`);
        if (stopped) child.kill('SIGTERM');
      };
      child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), watch()));
      child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), watch()));
      child.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (err.code === 'ENOENT' || err.code === 'EACCES') {
          reject(new TailscaleError({ reason: 'cli_missing', message: `the Tailscale CLI (${this.options.executable}) is not installed or not on the brain's PATH`, fix: INSTALL }));
        } else reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (signal === 'SIGKILL' && !stopped) {
          reject(new TailscaleError({ reason: 'failed', message: `tailscale ${args.join(' ')} did not finish within ${this.options.timeoutMs} ms`, fix: '`tailscale status` says whether this machine can reach its tailnet' }));
          return;
        }
        resolve({ code, stdout, stderr, stopped });
      });
    });
  }
}

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
