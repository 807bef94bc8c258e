// svc — the command-line client, and (svc serve) the brain itself. This is a composition root: it
// reads process.env and argv and hands plain values to the commands.
import sade from 'sade';
import { resolveConnection, BrainUnreachableError, type GlobalFlags } from './connection';
import { startBrain, stopBrain, status } from './commands/brain';
import { doctor } from './commands/doctor';
import { registerKeyCommands } from './commands/key';
import { registerModelCommands } from './commands/models';
import { registerMemoryCommands } from './commands/memory';
import { closestCommand, EXIT_USAGE } from './usage';
import type { ChatIo } from './commands/chat';

// The chat, its prompts and the setup wizard load when used: `svc serve` (what systemd runs) then
// never evaluates @clack/prompts, readline or the session protocol's validators (~1 MiB idle RSS).
const chat = () => import('./commands/chat');
const wizard = () => import('./commands/setup');

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
prog.option('--session', 'svc with no command: join this open session instead of opening a new one');

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
    const code = await startBrain(target, { host: o.host, port }, env, process.stdout);
    // Spec 4.14: then the REPL, after setup on the first run — only with a person at a terminal.
    if (code !== 0 || !chatIo().interactive) return exit(code);
    const { setup, isFirstRun } = await wizard();
    if (isFirstRun(target.home)) {
      const s = await setup(target, { out: process.stdout, interactive: true, restart: () => restartBrain(target, port) });
      if (s !== 0) return exit(s);
    }
    exit(await (await chat()).repl(target, chatIo()));
  });

prog
  .command('setup', 'Wizard: your name, the assistant name and persona, model provider and key (no TTY: keeps defaults)')
  .action(async (o: Opts) => exit(await (await wizard()).setup(conn(o), { out: process.stdout, interactive: chatIo().interactive, restart: () => restartBrain(conn(o), undefined) })));

prog
  .command('identity [action] [file]', 'Agent name, personality, rules, style; actions: user, soul, set-user <file>, set-soul <file>')
  .option('--json', 'Machine-readable output')
  .action(async (action: string | undefined, file: string | undefined, o: Opts) => {
    const { identity } = await import('./commands/identity');
    exit(await identity(conn(o), action, file, o.json === true, process.stdout, process.stderr));
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

const commandContext = { conn, exit, usageError, out: process.stdout, err: process.stderr, stdin: process.stdin, env };
registerKeyCommands(prog, commandContext);
registerModelCommands(prog, commandContext);
registerMemoryCommands(prog, commandContext);

const COMMANDS = ['serve', 'start', 'stop', 'status', 'doctor', 'setup', 'identity', 'key', 'models', 'memory'];

const chatIo = (): ChatIo => ({ input: process.stdin, output: process.stdout, errors: process.stderr, interactive: process.stdin.isTTY === true && process.stdout.isTTY === true });

/** Restarts a brain this CLI manages on $SVC_HOME so settings.json changes apply. */
async function restartBrain(c: ReturnType<typeof conn>, port: number | undefined): Promise<boolean> {
  if ((await stopBrain(c, process.stdout)) !== 0) return false;
  const urlPort = Number(new URL(c.url).port) || undefined;
  return (await startBrain(c, { port: port ?? urlPort }, env, process.stdout)) === 0;
}

const VALUE_FLAGS = new Set(['--url', '--home', '--session']);

/** Splits argv into words and global flags for the default actions (sade needs a command name). */
const BOOLEAN_FLAGS = new Set(['--json', '--rebuild', '--probe']);

function scanArgs(args: readonly string[]): { words: string[]; flags: Opts; meta: boolean } {
  const words: string[] = [];
  const flags: Opts = {};
  let meta = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [name, inline] = a.startsWith('--') ? (a.split(/=(.*)/s) as [string, string | undefined]) : [a, undefined];
    if (VALUE_FLAGS.has(name)) flags[name.slice(2)] = inline ?? args[++i];
    else if (['-h', '--help', '-v', '--version'].includes(a)) meta = true;
    else if (BOOLEAN_FLAGS.has(a)) flags[a.slice(2)] = true;
    else if (a.startsWith('-') && words.length === 0) usageError(`unknown option ${a}`);
    else words.push(a);
  }
  return { words, flags, meta };
}

async function main(argv: string[]): Promise<void> {
  const { words, flags, meta } = scanArgs(argv.slice(2));
  const first = words[0];
  // `svc` alone is the chat (spec 4.14); --session <id> joins an open session instead of a new one.
  if (!meta && first === undefined) return exit(await (await chat()).repl(conn(flags), chatIo(), typeof flags.session === 'string' ? flags.session : ''));
  if (!meta && first !== undefined && !COMMANDS.includes(first)) {
    // Spec 4.14 svc '<message>': a first word that is no command, and no near-typo of one, is a message.
    const hint = closestCommand(first, COMMANDS);
    if (hint) usageError(`unknown command '${first}'; did you mean '${hint}'?`);
    return exit(await (await chat()).oneShot(conn(flags), words.join(' '), chatIo()));
  }
  const run = prog.parse(argv, {
    lazy: true,
    boolean: ['json', 'rebuild', 'probe'],
    string: ['url', 'home', 'host', 'port', 'session'],
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
