// svc — the command-line client, and (svc serve) the brain itself. This is a composition root: it
// reads process.env and argv and hands plain values to the commands.
import sade from 'sade';
import { resolveConnection, BrainUnreachableError, type GlobalFlags } from './connection';
import { startBrain, stopBrain, status } from './commands/brain';
import { doctor } from './commands/doctor';
import { closestCommand, EXIT_USAGE } from './usage';

declare const __SVC_VERSION__: string;
const VERSION = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';

interface Opts extends GlobalFlags {
  json?: boolean;
  host?: string;
  port?: number | string;
  [flag: string]: unknown;
}

const env = process.env;
const exit = (code: number): void => {
  process.exitCode = code;
};
const conn = (o: Opts) => resolveConnection({ url: o.url, home: o.home }, env);
const portOf = (o: Opts): number | undefined => {
  if (o.port === undefined) return undefined;
  const n = Number(o.port);
  if (!Number.isInteger(n) || n < 0 || n > 65535) usageError(`--port ${String(o.port)}: expected a port number 0-65535`);
  return n;
};

function usageError(message: string): never {
  process.stderr.write(`svc: ${message}\nRun \`svc --help\` for usage.\n`);
  process.exit(EXIT_USAGE);
}

const prog = sade('svc').version(VERSION).describe('svc — the assistant brain for a home mesh');
prog.option('--url', 'Brain address (default $SVC_URL or http://127.0.0.1:9090)');
prog.option('--home', 'Data directory (default $SVC_HOME or ~/.svc)');

prog
  .command('serve', 'Run the brain API server in the foreground (headless; what systemd runs)')
  .option('--host', 'Listen address (default $SVC_HOST or 127.0.0.1)')
  .option('--port', 'Listen port (default $SVC_PORT or 9090)')
  .action(async (o: Opts) => {
    const { serve } = await import('../daemon/main');
    await serve({ ...(o.home ? { home: o.home } : {}), ...(o.host ? { host: String(o.host) } : {}), ...(portOf(o) !== undefined ? { port: portOf(o)! } : {}) });
  });

prog
  .command('start', 'Start the brain in the background unless it is running, and wait until it is healthy')
  .option('--host', 'Listen address')
  .option('--port', 'Listen port')
  .action(async (o: Opts) => {
    const port = portOf(o);
    const c = conn(o);
    const target = port !== undefined && !o.url ? { ...c, url: `http://${o.host && o.host !== '0.0.0.0' ? o.host : '127.0.0.1'}:${port}` } : c;
    exit(await startBrain(target, { host: o.host, port }, process.stdout));
  });

prog.command('stop', 'Stop the brain started on this $SVC_HOME (SIGTERM, waits for exit)').action(async (o: Opts) => exit(await stopBrain(conn(o), process.stdout)));

prog
  .command('status', 'Brain state: running, version, uptime')
  .option('--json', 'Machine-readable output')
  .action(async (o: Opts) => exit(await status(conn(o), o.json === true, process.stdout)));

prog
  .command('doctor', 'Diagnostics with fixes: node, $SVC_HOME permissions, settings, vault key, port, brain')
  .option('--json', 'Machine-readable output')
  .action(async (o: Opts) => exit(await doctor(conn(o), env, o.json === true, process.stdout)));

const COMMANDS = ['serve', 'start', 'stop', 'status', 'doctor'];

async function main(argv: string[]): Promise<void> {
  const first = argv[2];
  if (first !== undefined && !first.startsWith('-') && !COMMANDS.includes(first)) {
    const hint = closestCommand(first, COMMANDS);
    usageError(`unknown command '${first}'${hint ? `; did you mean '${hint}'?` : ''}`);
  }
  const run = prog.parse(argv, {
    lazy: true,
    boolean: ['json'],
    string: ['url', 'home', 'host', 'port'],
    unknown: (flag: string) => usageError(`unknown option ${flag}`),
  });
  if (!run) return; // --help or --version was printed
  await (run.handler as (...a: unknown[]) => Promise<void>)(...run.args);
}

main(process.argv).catch((err: unknown) => {
  if (err instanceof BrainUnreachableError) {
    process.stderr.write(`svc: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`svc: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
