// What a node-agent command line means (docs/node-agent.md). Pure: main.ts hands it argv and gets a
// plain value back, so every option and every refusal is tested without a process.
//   node-agent [run] [--config FILE] [--brain URL] [--node-id ID] [--name NAME] [--key-dir DIR]
//                                    the hardware link (pairs first when the board has no key)
//   node-agent pair [--brain URL] [--node-id ID] [--name NAME] [--key-dir DIR] [--timeout SECONDS]
import { NAME_MAX, NODE_ID_PATTERN } from '../protocol/pairing';
import { parseBrainUrl } from '../mesh/brain-url';

export interface PairOptions {
  brain?: string;
  nodeId?: string;
  name?: string;
  keyDir?: string;
  timeoutSeconds: number;
}

export interface RunOptions {
  config?: string;
  brain?: string;
  nodeId?: string;
  name?: string;
  keyDir?: string;
}

export type AgentCommand = { kind: 'run'; options: RunOptions } | { kind: 'help' } | { kind: 'pair'; options: PairOptions } | { kind: 'usage'; message: string };

/** How long `pair` waits for the claim by default: a code's whole life on the brain (10 minutes). */
/** The environment variables the node-agent reads (main.ts), as docs/node-agent.md lists them. */
export const NODE_AGENT_ENVIRONMENT = {
  SVC_BRAIN_URL: 'the brain to pair with when --brain is not given (else found over mDNS)',
  SVC_NODE_KEY_DIR: 'where node keys are kept when --key-dir is not given (default ~/.config/svc-node/keys)',
  SVC_NODE_CONFIG: 'the config file of `run` when --config is not given (default ~/.config/svc-node/config.json)',
  SVC_NODE_KEY: 'the node key itself, instead of the key directory (the brain gives its local node-agent one this way)',
} as const;

export const DEFAULT_PAIR_TIMEOUT_S = 600;
/** The longest --timeout: one day (a code lives 10 minutes; a node may announce again after a restart of the brain). */
export const MAX_PAIR_TIMEOUT_S = 86_400;

export const USAGE = `usage: node-agent [run] [--config FILE] [--brain URL] [--node-id ID] [--name NAME] [--key-dir DIR]
       node-agent pair [--brain URL] [--node-id ID] [--name NAME] [--key-dir DIR] [--timeout SECONDS]

  run       link this board's devices to the brain (pairs by code first when it has no node key)
            --config FILE    the config file (default $SVC_NODE_CONFIG or ~/.config/svc-node/config.json)
            --brain, --node-id, --name, --key-dir as for pair; they win over the config file
  pair      show a 6-digit code, wait until it is claimed with \`svc pair code NNNNNN\`, keep the node key
            --brain URL      the brain (default $SVC_BRAIN_URL, else found over mDNS)
            --node-id ID     this node's id (default the host name) [A-Za-z0-9._:-]{1,128}
            --name NAME      a name for the node on the brain (default the node id)
            --key-dir DIR    where node keys are kept (default $SVC_NODE_KEY_DIR or ~/.config/svc-node/keys)
            --timeout SECS   give up after this long (default ${DEFAULT_PAIR_TIMEOUT_S})
`;

const NODE_ID = new RegExp(NODE_ID_PATTERN);
const PAIR_FLAGS = new Set(['brain', 'node-id', 'name', 'key-dir', 'timeout']);
const RUN_FLAGS = new Set(['config', 'brain', 'node-id', 'name', 'key-dir']);

/** A node id as node-protocol.md allows it, or the reason it is not one. */
export function checkNodeId(id: string): string | undefined {
  return NODE_ID.test(id) ? undefined : `node id "${id.slice(0, 40)}" is not [A-Za-z0-9._:-]{1,128}`;
}


function checkName(name: string): string | undefined {
  if (name.trim() === '' || name.length > NAME_MAX || /\p{Cc}/u.test(name)) return `--name must be 1-${NAME_MAX} printable characters`;
  return undefined;
}

function pairOptions(values: ReadonlyMap<string, string>): PairOptions | string {
  const options: PairOptions = { timeoutSeconds: DEFAULT_PAIR_TIMEOUT_S };
  const brain = values.get('brain');
  if (brain !== undefined) {
    const parsed = parseBrainUrl(brain);
    if ('problem' in parsed) return `--brain ${parsed.problem}`;
    options.brain = parsed.url;
  }
  const nodeId = values.get('node-id');
  if (nodeId !== undefined) {
    const problem = checkNodeId(nodeId);
    if (problem !== undefined) return `--node-id: ${problem}`;
    options.nodeId = nodeId;
  }
  const name = values.get('name');
  if (name !== undefined) {
    const problem = checkName(name);
    if (problem !== undefined) return problem;
    options.name = name;
  }
  const keyDir = values.get('key-dir');
  if (keyDir !== undefined) {
    if (keyDir === '' || keyDir.includes('\0')) return '--key-dir needs a directory';
    options.keyDir = keyDir;
  }
  const timeout = values.get('timeout');
  if (timeout !== undefined) {
    if (!/^\d{1,6}$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > MAX_PAIR_TIMEOUT_S) return `--timeout ${timeout.slice(0, 20)}: expected whole seconds, 1-${MAX_PAIR_TIMEOUT_S}`;
    options.timeoutSeconds = Number(timeout);
  }
  return options;
}

function runOptions(values: ReadonlyMap<string, string>): RunOptions | string {
  const config = values.get('config');
  if (config !== undefined && (config === '' || config.includes('\0'))) return '--config needs a file';
  const common = pairOptions(new Map([...values].filter(([k]) => k !== 'config')));
  if (typeof common === 'string') return common;
  const { timeoutSeconds: _unused, ...rest } = common;
  return { ...rest, ...(config !== undefined ? { config } : {}) };
}

/** Reads `--flag value` and `--flag=value` pairs; the first problem wins. */
function readFlags(args: readonly string[], known: ReadonlySet<string>): Map<string, string> | string {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) return `unexpected argument "${a.slice(0, 40)}"`;
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (!known.has(name)) return `unknown option --${name.slice(0, 40)}`;
    if (values.has(name)) return `--${name} given twice`;
    const value = eq < 0 ? args[++i] : a.slice(eq + 1);
    if (value === undefined) return `--${name} needs a value`;
    values.set(name, value);
  }
  return values;
}

export function parseAgentArgs(args: readonly string[]): AgentCommand {
  if (args.some((a) => a === '-h' || a === '--help' || a === 'help')) return { kind: 'help' };
  const [command, ...rest] = args;
  if (command === undefined || command === 'run' || command.startsWith('--')) {
    const values = readFlags(command === 'run' ? rest : args, RUN_FLAGS);
    if (typeof values === 'string') return { kind: 'usage', message: values };
    const options = runOptions(values);
    return typeof options === 'string' ? { kind: 'usage', message: options } : { kind: 'run', options };
  }
  if (command !== 'pair') return { kind: 'usage', message: `unknown command "${command.slice(0, 40)}" (commands: run, pair)` };
  const values = readFlags(rest, PAIR_FLAGS);
  if (typeof values === 'string') return { kind: 'usage', message: values };
  const options = pairOptions(values);
  return typeof options === 'string' ? { kind: 'usage', message: options } : { kind: 'pair', options };
}
