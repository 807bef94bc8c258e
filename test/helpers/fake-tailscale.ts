// A stand-in `tailscale` executable for remote-mode tests (docs/access.md "How remote mode is tested"):
// a script that records each argv it is run with and prints what the real CLI (1.52 and later) prints
// for the commands svc uses — `status --json`, `serve --bg --yes <target>`, `serve --https=443 off` —
// in the situation the test picks. It serves nothing: the tests check what svc asks of Tailscale and
// what it makes of the answers, not the tunnel itself.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `hang`: never answers (a daemon that does not respond). */
export type FakeTailscaleSituation = 'running' | 'daemon_down' | 'logged_out' | 'operator_denied' | 'serve_not_enabled' | 'hang';

export interface FakeTailscale {
  /** The folder holding `tailscale`: put it first on PATH. */
  dir: string;
  /** The executable's absolute path. */
  executable: string;
  /** Each run's arguments, in order. */
  calls(): string[][];
  /** Whether `serve` is on (set by serve, cleared by serve --https=443 off). */
  serving(): string | null;
}

const SCRIPT = (situation: FakeTailscaleSituation, dir: string): string => `#!${process.execPath}
const { appendFileSync, writeFileSync, rmSync } = require('node:fs');
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(join(dir, 'calls.log'))}, JSON.stringify(args) + '\\n');
const situation = ${JSON.stringify(situation)};
const out = (text, code) => { process.stdout.write(text); process.exitCode = code; };
const err = (text, code) => { process.stderr.write(text); process.exitCode = code; };
if (situation === 'hang') {
  setInterval(() => {}, 60000);
} else if (situation === 'daemon_down') {
  err("failed to connect to local tailscaled; it doesn't appear to be running (sudo systemctl start tailscaled ?)\\n", 1);
} else if (args[0] === 'status' && args[1] === '--json') {
  const running = situation !== 'logged_out';
  out(JSON.stringify({ Version: '1.76.6-t0000000-g0000000', BackendState: running ? 'Running' : 'NeedsLogin', Self: { HostName: 'brain', DNSName: running ? 'brain.tail1234.ts.net.' : '', Online: running } }, null, 2) + '\\n', 0);
} else if (args[0] === 'serve' && args.includes('--https=443') && args.at(-1) === 'off') {
  rmSync(${JSON.stringify(join(dir, 'serving'))}, { force: true });
  process.exitCode = 0;
} else if (args[0] === 'serve' && args.includes('--bg')) {
  const target = args.at(-1);
  if (situation === 'operator_denied') {
    err("sending serve config: Access denied: serve config denied\\n\\nUse 'sudo tailscale serve --bg --yes " + target + "'.\\nTo not require root, use 'sudo tailscale set --operator=$USER' once.\\n", 1);
  } else if (situation === 'serve_not_enabled') {
    // The real CLI prints this and then waits for the tailnet admin to enable Serve in a browser.
    process.stdout.write('Serve is not enabled on your tailnet.\\nTo enable, visit:\\n\\n         https://login.tailscale.com/f/serve?node=nTESTNODE11CNTRL\\n\\n');
    setInterval(() => {}, 60000);
  } else {
    writeFileSync(${JSON.stringify(join(dir, 'serving'))}, target);
    out('Available within your tailnet:\\n\\nhttps://brain.tail1234.ts.net/\\n|-- proxy ' + target + '\\n\\nServe started and running in the background.\\nTo disable the proxy, run: tailscale serve --https=443 off\\n', 0);
  }
} else {
  err('fake tailscale: unexpected arguments ' + JSON.stringify(args) + '\\n', 2);
}
`;

export function fakeTailscale(t: { after(fn: () => unknown): void }, situation: FakeTailscaleSituation): FakeTailscale {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fake-tailscale-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const executable = join(dir, 'tailscale');
  writeFileSync(executable, SCRIPT(situation, dir));
  chmodSync(executable, 0o755);
  const log = join(dir, 'calls.log');
  const serving = join(dir, 'serving');
  return {
    dir,
    executable,
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]) : []),
    serving: () => (existsSync(serving) ? readFileSync(serving, 'utf8') : null),
  };
}
