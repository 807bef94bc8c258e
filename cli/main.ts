// svc — the command-line client, and (svc serve) the brain itself. This is a composition root: it
// reads process.env and argv and hands plain values to the commands.
import sade from 'sade';
import { resolveConnection, resolveToken, type Connection, type GlobalFlags } from './connection';
import { startBrain, stopBrain, status } from './commands/brain';
import { doctor } from './commands/doctor';
import { registerKeyCommands } from './commands/key';
import { registerModelCommands } from './commands/models';
import { registerMemoryCommands } from './commands/memory';
import { registerGrantCommands } from './commands/grant';
import { registerTwinCommands } from './commands/twin';
import { registerCheckpointCommands } from './commands/checkpoints';
import { registerFlowCommands } from './commands/flows';
import { registerAccessCommands } from './commands/access';
import { registerPairCommands } from './commands/pair';
import { registerDeviceCommands } from './commands/devices';
import { registerBridgeCommands } from './commands/bridge';
import { registerSyncCommands } from './commands/sync';
import { registerAppCommands } from './commands/app';
import { registerMcpCommands } from './commands/mcp';
import { registerRegistryCommands } from './commands/registry';
import { registerPublishCommands } from './commands/publish';
import { registerInstallCommands } from './commands/install';
import { registerMarketplaceCommands } from './commands/marketplace';
import { registerSkillsCommands } from './commands/skills';
import { registerPublisherCommands } from './commands/publisher';
import { EXIT_USAGE } from './usage';
import { grammarOf, parseCommandLine, type SadeTree } from './command-line';
import { reexecPlan } from './brain-runtime';
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

/** A text argument; `-` reads it from stdin (`echo … | svc memory note -`). */
async function textArg(value: string): Promise<string> {
  if (value !== '-') return value;
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  const text = Buffer.concat(parts).toString('utf8').trim();
  if (text === '') usageError('`-` reads the text from stdin, and stdin was empty');
  return text;
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
    const port = portOf(o);
    // Started bare (a terminal, a container): restart with the runtime `svc start` and the systemd
    // unit give the brain (cli/brain-runtime.ts), ~50 MiB less idle RSS.
    const plan = reexecPlan(process.execArgv, process.argv, env);
    if (plan) return (await import('./reexec')).reexec(process.execPath, plan);
    const { serve } = await import('../daemon/main');
    await serve({ ...(o.home ? { home: o.home } : {}), ...(o.host ? { host: String(o.host) } : {}), ...(port !== undefined ? { port } : {}) });
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
    // On a fresh home the brain has just created api-token: read it now, not before the start.
    const live: Connection = { ...target, token: resolveToken(target.home, env) };
    const { setup, isFirstRun } = await wizard();
    if (isFirstRun(live.home)) {
      const s = await setup(live, { out: process.stdout, interactive: true, restart: () => restartBrain(live, port) });
      if (s !== 0) return exit(s);
    }
    exit(await (await chat()).repl(live, chatIo()));
  });

prog
  .command('setup', 'Wizard: your name, the assistant name and persona, model provider and key (no TTY: keeps defaults)')
  .action(async (o: Opts) => exit(await (await wizard()).setup(conn(o), { out: process.stdout, interactive: chatIo().interactive, restart: () => restartBrain(conn(o), undefined) })));

prog
  .command('identity [action] [file]', 'Agent name, personality, rules, style; actions: user, soul, set-user <file>, set-soul <file> (- reads stdin)')
  .option('--json', 'Machine-readable output')
  .action(async (action: string | undefined, file: string | undefined, o: Opts) => {
    const { identity } = await import('./commands/identity');
    exit(await identity(conn(o), action, file, o.json === true, process.stdout, process.stderr));
  });

prog.command('stop', 'Stop the brain started on this $SVC_HOME (SIGTERM, waits for exit)').action(async (o: Opts) => exit(await stopBrain(conn(o), process.stdout)));

prog
  .command('status', 'Brain state: running, version, uptime, and the home and pid of the brain on the port')
  .option('--json', 'Machine-readable output')
  .action(async (o: Opts) => exit(await status(conn(o), o.json === true, process.stdout)));

prog
  .command('doctor', 'Diagnostics with fixes: node, $SVC_HOME permissions, settings, vault key, port, brain, API token')
  .option('--json', 'Machine-readable output')
  .action(async (o: Opts) => exit(await doctor(conn(o), env, o.json === true, process.stdout)));

const commandContext = { conn, exit, usageError, textArg, out: process.stdout, err: process.stderr, stdin: process.stdin, env };
registerKeyCommands(prog, commandContext);
registerModelCommands(prog, commandContext);
registerMemoryCommands(prog, commandContext);
registerGrantCommands(prog, commandContext);
registerTwinCommands(prog, commandContext);
registerCheckpointCommands(prog, commandContext);
registerFlowCommands(prog, commandContext);
registerAccessCommands(prog, commandContext);
registerPairCommands(prog, commandContext);
registerDeviceCommands(prog, commandContext);
registerBridgeCommands(prog, commandContext);
registerSyncCommands(prog, commandContext);
registerAppCommands(prog, commandContext);
registerMcpCommands(prog, commandContext);
registerRegistryCommands(prog, commandContext, VERSION);
registerPublishCommands(prog, commandContext);
registerInstallCommands(prog, commandContext);
registerMarketplaceCommands(prog, commandContext);
registerSkillsCommands(prog, commandContext);
registerPublisherCommands(prog, commandContext);

const chatIo = (): ChatIo => ({ input: process.stdin, output: process.stdout, errors: process.stderr, interactive: process.stdin.isTTY === true && process.stdout.isTTY === true });

/** Restarts a brain this CLI manages on $SVC_HOME so settings.json changes apply. */
async function restartBrain(c: Connection, port: number | undefined): Promise<boolean> {
  if ((await stopBrain(c, process.stdout)) !== 0) return false;
  const urlPort = Number(new URL(c.url).port) || undefined;
  return (await startBrain(c, { port: port ?? urlPort }, env, process.stdout)) === 0;
}

/** Options that take no value (`--no-probe` sets probe false); every other option takes one. */
const BOOLEAN_FLAGS = new Set(['json', 'rebuild', 'probe', 'replace', 'clear', 'write', 'force', 'retry', 'skip', 'pin', 'wait', 'all', 'approve', 'reject', 'allow-unsigned']);
/** Per command: options of BOOLEAN_FLAGS that take a value there (`svc sync pair <url> --pin 1234`). */
const VALUE_FLAGS_OF = new Map([['sync pair', new Set(['pin'])]]);
/** Commands whose last argument is free text: the remaining words are joined (`svc memory note buy milk`). */
const REST_TEXT = new Set(['memory search', 'memory note', 'marketplace search', 'mcp servers add']);

type Handler = (...args: unknown[]) => Promise<void> | void;

async function main(argv: string[]): Promise<void> {
  const tree = (prog as unknown as { tree: SadeTree }).tree;
  const line = parseCommandLine(argv.slice(2), grammarOf(tree, BOOLEAN_FLAGS, REST_TEXT, VALUE_FLAGS_OF));
  switch (line.kind) {
    case 'meta':
      prog.parse(argv); // --help or --version
      return;
    case 'usage':
      return usageError(line.message);
    case 'chat': // `svc` alone (spec 4.14); --session <id> joins an open session instead of a new one
      return exit(await (await chat()).repl(conn(line.flags), chatIo(), typeof line.flags.session === 'string' ? line.flags.session : ''));
    case 'message': // spec 4.14 svc '<message>'
      return exit(await (await chat()).oneShot(conn(line.flags), await textArg(line.text), chatIo()));
    case 'command': {
      const node = tree[line.spec.path.join(' ')];
      const handler = typeof node === 'object' ? (node as unknown as { handler: Handler }).handler : undefined;
      if (!handler) throw new Error(`svc ${line.spec.path.join(' ')} has no action`);
      await handler(...line.args, { ...line.flags, _: [] });
    }
  }
}

main(process.argv).catch((err: unknown) => {
  // One line for people; the stack only when asked for (SVC_DEBUG=1).
  const debug = env.SVC_DEBUG === '1';
  process.stderr.write(`svc: ${debug && err instanceof Error ? (err.stack ?? err.message) : err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
