// What a phone-bridge command line means (docs/phone-bridge.md "Commands"). Pure: main.ts hands it
// argv and gets a plain value back.
import { NAME_MAX, NODE_ID_PATTERN } from '../protocol/pairing';
import { parseBrainUrl } from '../mesh/brain-url';

export type Platform = 'ios' | 'android';

export interface PairCommand {
  kind: 'pair';
  url: string;
  keyDir?: string;
  name?: string;
  pin?: string;
  platform: Platform;
}

export interface LinkOptions {
  brain?: string;
  keyDir?: string;
  nodeId?: string;
}

export interface RunCommand extends LinkOptions {
  kind: 'run';
  bridgeId?: string;
  peripherals?: string;
  name?: string;
  platform: Platform;
  bridgeTtlSeconds: number;
  /** Each line of stdin becomes a chat_request in this session. */
  session?: string;
}

export interface ChatCommand extends LinkOptions {
  kind: 'chat';
  text: string;
  session: string;
  timeoutSeconds: number;
}

export type BridgeCommand = PairCommand | RunCommand | ChatCommand | { kind: 'help' } | { kind: 'usage'; message: string };

export const DEFAULT_BRIDGE_TTL_S = 300;
export const DEFAULT_CHAT_TIMEOUT_S = 120;

/** The environment variables main.ts reads. */
export const PHONE_BRIDGE_ENVIRONMENT = {
  SVC_BRAIN_URL: 'the brain for run and chat when --brain is not given',
  SVC_PHONE_BRIDGE_KEY_DIR: 'where node keys are kept when --key-dir is not given (default ~/.config/svc-phone-bridge/keys)',
} as const;

export const USAGE = `usage: phone-bridge pair <pair-url> [--key-dir DIR] [--name NAME] [--pin PIN] [--platform ios|android]
       phone-bridge run [--brain URL] [--key-dir DIR] [--node-id ID] [--bridge-id ID] [--peripherals FILE]
                        [--name NAME] [--platform ios|android] [--bridge-ttl SECONDS] [--session S]
       phone-bridge chat <text> --session S [--brain URL] [--key-dir DIR] [--node-id ID] [--timeout SECONDS]

  pair   complete pairing from the svc://pair URL a QR code carries (on the brain: svc bridge pair); keeps the node key
  run    connect to the brain's /v1/node as a phone, relay the peripherals (a built-in demo bulb and heart-rate
         strap, or those of --peripherals FILE), answer their actions, reconnect with backoff; with --session,
         each line on stdin is a chat message in that session. Exit 77 when the brain refuses the key.
  chat   send one chat message as this phone and print the answer (while run is not running for this node)

  --brain URL       the brain (default $SVC_BRAIN_URL)
  --key-dir DIR     where node keys are kept (default $SVC_PHONE_BRIDGE_KEY_DIR or ~/.config/svc-phone-bridge/keys)
  --node-id ID      which paired node to be (default: the only key in the key directory)
  --bridge-id ID    the bridge_id of peripheral_bridge_register (default the node id)
  --bridge-ttl S    how long a bridge registration lasts; it is renewed at 80% (default ${DEFAULT_BRIDGE_TTL_S})
`;

const NODE_ID = new RegExp(NODE_ID_PATTERN);
const FLAGS: Record<'pair' | 'run' | 'chat', ReadonlySet<string>> = {
  pair: new Set(['key-dir', 'name', 'pin', 'platform']),
  run: new Set(['brain', 'key-dir', 'node-id', 'bridge-id', 'peripherals', 'name', 'platform', 'bridge-ttl', 'session']),
  chat: new Set(['brain', 'key-dir', 'node-id', 'session', 'timeout']),
};


/** Splits `--flag value` / `--flag=value` from positional words; a problem when a flag is unknown or has no value. */
function split(args: readonly string[], allowed: ReadonlySet<string>): { values: Map<string, string>; words: string[] } | string {
  const values = new Map<string, string>();
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = arg.slice(2, eq < 0 ? undefined : eq);
    if (!allowed.has(flag)) return `unknown option --${flag}`;
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq < 0 && value.startsWith('--'))) return `--${flag} needs a value`;
    if (values.has(flag)) return `--${flag} is given twice`;
    values.set(flag, value);
  }
  return { values, words };
}

function seconds(value: string | undefined, fallback: number, flag: string, max: number): number | string {
  if (value === undefined) return fallback;
  const n = Number(value);
  return /^\d{1,9}$/.test(value) && n >= 1 && n <= max ? n : `--${flag} is a whole number of seconds, 1 to ${max}`;
}

function platform(value: string | undefined): { platform: Platform } | { problem: string } {
  if (value === undefined || value === 'android' || value === 'ios') return { platform: value ?? 'android' };
  return { problem: '--platform is ios or android' };
}

function checked(values: ReadonlyMap<string, string>): string | undefined {
  const nodeId = values.get('node-id');
  if (nodeId !== undefined && !NODE_ID.test(nodeId)) return `--node-id "${nodeId.slice(0, 40)}" is not [A-Za-z0-9._:-]{1,128}`;
  const bridgeId = values.get('bridge-id');
  if (bridgeId !== undefined && !NODE_ID.test(bridgeId)) return `--bridge-id "${bridgeId.slice(0, 40)}" is not [A-Za-z0-9._:-]{1,128}`;
  const name = values.get('name');
  if (name !== undefined && (name.trim() === '' || name.length > NAME_MAX || /\p{Cc}/u.test(name))) return `--name must be 1-${NAME_MAX} printable characters`;
  const session = values.get('session');
  if (session !== undefined && (session === '' || session.length > 200)) return '--session is 1-200 characters';
  const pin = values.get('pin');
  if (pin !== undefined && !/^\d{4,8}$/.test(pin)) return '--pin is 4 to 8 digits';
  return undefined;
}

const optional = <K extends string>(key: K, value: string | undefined): { [P in K]?: string } => (value === undefined ? {} : ({ [key]: value } as { [P in K]: string }));

function link(values: ReadonlyMap<string, string>): LinkOptions | string {
  const brain = values.get('brain');
  const parsed = brain === undefined ? undefined : parseBrainUrl(brain);
  if (parsed !== undefined && 'problem' in parsed) return `--brain ${parsed.problem}`;
  return { ...optional('brain', parsed?.url), ...optional('keyDir', values.get('key-dir')), ...optional('nodeId', values.get('node-id')) };
}

export function parseBridgeArgs(argv: readonly string[]): BridgeCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { kind: 'help' };
  if (command !== 'pair' && command !== 'run' && command !== 'chat') return { kind: 'usage', message: `unknown command "${command.slice(0, 40)}"` };
  const parsed = split(rest, FLAGS[command]);
  if (typeof parsed === 'string') return { kind: 'usage', message: parsed };
  const { values, words } = parsed;
  const problem = checked(values);
  if (problem !== undefined) return { kind: 'usage', message: problem };
  const p = platform(values.get('platform'));
  if (command === 'pair') {
    if (words.length !== 1) return { kind: 'usage', message: 'pair takes one argument: the svc://pair URL' };
    if ('problem' in p) return { kind: 'usage', message: p.problem };
    return { kind: 'pair', url: words[0]!, platform: p.platform, ...optional('keyDir', values.get('key-dir')), ...optional('name', values.get('name')), ...optional('pin', values.get('pin')) };
  }
  const options = link(values);
  if (typeof options === 'string') return { kind: 'usage', message: options };
  if (command === 'chat') {
    const session = values.get('session');
    if (words.length !== 1 || words[0]!.trim() === '') return { kind: 'usage', message: 'chat takes one argument: the message (quote it)' };
    if (session === undefined) return { kind: 'usage', message: 'chat needs --session' };
    const timeout = seconds(values.get('timeout'), DEFAULT_CHAT_TIMEOUT_S, 'timeout', 3600);
    if (typeof timeout === 'string') return { kind: 'usage', message: timeout };
    return { kind: 'chat', ...options, text: words[0]!, session, timeoutSeconds: timeout };
  }
  if (words.length > 0) return { kind: 'usage', message: `run takes no arguments (got "${words[0]!.slice(0, 40)}")` };
  if ('problem' in p) return { kind: 'usage', message: p.problem };
  const ttl = seconds(values.get('bridge-ttl'), DEFAULT_BRIDGE_TTL_S, 'bridge-ttl', 86_400);
  if (typeof ttl === 'string') return { kind: 'usage', message: ttl };
  return {
    kind: 'run',
    ...options,
    platform: p.platform,
    bridgeTtlSeconds: ttl,
    ...optional('bridgeId', values.get('bridge-id')),
    ...optional('peripherals', values.get('peripherals')),
    ...optional('name', values.get('name')),
    ...optional('session', values.get('session')),
  };
}
