// phone-bridge: the reference phone-bridge client (docs/phone-bridge.md) — what a phone app does to
// relay BLE peripherals to the brain, as a small program the tests run and app developers can read.
// This is its composition root (STYLE.md 1): the only module here that reads process.env and argv.
//   phone-bridge pair <pair-url>   complete pairing from a QR code's URL, keep the node key
//   phone-bridge run               the /v1/node link with simulated peripherals
//   phone-bridge chat <text>       one chat message as this phone
// Exit codes: 0 done, 1 failed, 2 usage, 69 the brain was not reachable, 75 another link took this
// node (4003), 77 the brain refused the node key (4001).
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BridgeClient, LinkDown, type BridgeEnd, type BridgeIdentity } from './client';
import { parseBridgeArgs, USAGE, type ChatCommand, type LinkOptions, type RunCommand } from './command-line';
import { parseBrainUrl } from '../mesh/brain-url';
import { pairedNodeIds, readNodeKey } from '../mesh/node-key-store';
import { pairFromUrl } from './pair';
import { DEMO_PERIPHERALS, parsePeripheralsFile, PeripheralError, PeripheralSet } from './peripherals';

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EX_UNAVAILABLE = 69;
const EX_TEMPFAIL = 75;
const EX_NOPERM = 77;

const env = process.env;
const defaultKeyDir = env.SVC_PHONE_BRIDGE_KEY_DIR || join(homedir(), '.config', 'svc-phone-bridge', 'keys');
const log = (line: string): void => void process.stderr.write(`phone-bridge: ${line}\n`);

/** The brain, the node and its key a link needs, or the exit code and why not. */
async function identityOf(options: LinkOptions, extra: { name?: string | undefined; bridgeId?: string | undefined; platform?: 'ios' | 'android' }): Promise<{ brain: string; identity: BridgeIdentity } | number> {
  const given = options.brain ?? env.SVC_BRAIN_URL;
  if (given === undefined || given === '') {
    log('give --brain URL (or set SVC_BRAIN_URL)');
    return EXIT_USAGE;
  }
  const parsed = parseBrainUrl(given);
  if ('problem' in parsed) {
    log(`SVC_BRAIN_URL ${parsed.problem}`);
    return EXIT_USAGE;
  }
  const brain = parsed.url;
  const keyDir = options.keyDir ?? defaultKeyDir;
  const paired = await pairedNodeIds(keyDir);
  const nodeId = options.nodeId ?? (paired.length === 1 ? paired[0] : undefined);
  if (nodeId === undefined) {
    log(paired.length === 0 ? `not paired yet (no node key in ${keyDir}); run phone-bridge pair <pair-url> first` : `${keyDir} holds keys for ${paired.join(', ')}: give --node-id`);
    return EXIT_USAGE;
  }
  const key = await readNodeKey(keyDir, nodeId);
  if (key === null) {
    log(`no node key for ${nodeId} in ${keyDir}; run phone-bridge pair <pair-url> first`);
    return EXIT_USAGE;
  }
  return { brain, identity: { nodeId, key, name: extra.name ?? nodeId, bridgeId: extra.bridgeId ?? nodeId, platform: extra.platform ?? 'android' } };
}

function exitFor(end: BridgeEnd): number {
  if (end.reason === 'stopped') return 0;
  log(end.detail);
  return end.reason === 'unauthorized' ? EX_NOPERM : EX_TEMPFAIL;
}

async function run(command: RunCommand): Promise<number> {
  const link = await identityOf(command, command);
  if (typeof link === 'number') return link;
  let peripherals: PeripheralSet;
  try {
    peripherals = new PeripheralSet(command.peripherals === undefined ? DEMO_PERIPHERALS : parsePeripheralsFile(await readFile(command.peripherals, 'utf8')));
  } catch (err) {
    if (!(err instanceof PeripheralError)) throw err;
    log(`${command.peripherals ?? 'peripherals'}: ${err.message}`);
    return EXIT_USAGE;
  }
  const client = new BridgeClient({ brainUrl: link.brain, identity: link.identity, peripherals, bridgeTtlMs: command.bridgeTtlSeconds * 1000, random: Math.random, now: Date.now, log });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => client.stop());
  log(`bridge ${link.identity.bridgeId} relaying ${peripherals.all().map((p) => p.deviceId).join(', ')} to ${link.brain}`);
  if (command.session !== undefined) chatFromStdin(client, command.session);
  return exitFor(await client.run());
}

/** Each line on stdin is a chat message in `session`; answers go to stdout. */
function chatFromStdin(client: BridgeClient, session: string): void {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    client.chat(session, line).then(
      (answer) => void process.stdout.write(`${answer}\n`),
      (err: unknown) => {
        if (!(err instanceof LinkDown)) throw err;
        log(`chat not sent: ${err.message}`);
      },
    );
  });
}

async function chat(command: ChatCommand): Promise<number> {
  const link = await identityOf(command, {});
  if (typeof link === 'number') return link;
  const client = new BridgeClient({ brainUrl: link.brain, identity: link.identity, peripherals: null, bridgeTtlMs: 0, random: Math.random, now: Date.now, log });
  const ended = client.run();
  const outcome = await Promise.race([
    client.registered().then(() => client.chat(command.session, command.text, (partial) => void process.stdout.write(partial))),
    ended,
    new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), command.timeoutSeconds * 1000).unref()),
  ]).catch((err: unknown) => {
    if (err instanceof LinkDown) return err;
    throw err;
  });
  client.stop();
  const end = await ended;
  if (typeof outcome === 'string' && outcome !== 'timeout') {
    process.stdout.write(`${outcome}\n`);
    return 0;
  }
  if (outcome === 'timeout') log(`no answer within ${command.timeoutSeconds} s`);
  else if (outcome instanceof LinkDown) log(outcome.message);
  return end.reason === 'stopped' ? (outcome === 'timeout' ? EX_UNAVAILABLE : EXIT_FAILED) : exitFor(end);
}

async function main(argv: readonly string[]): Promise<number> {
  const command = parseBridgeArgs(argv);
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'usage':
      process.stderr.write(`phone-bridge: ${command.message}\n${USAGE}`);
      return EXIT_USAGE;
    case 'pair':
      return pairFromUrl({ url: command.url, keyDir: command.keyDir ?? defaultKeyDir, name: command.name, pin: command.pin, platform: command.platform }, { fetch: (url, init) => fetch(url, init), out: process.stdout, err: process.stderr });
    case 'run':
      return run(command);
    case 'chat':
      return chat(command);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Timers of a stopped link (an unanswered chat, a backoff) must not keep the process.
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`phone-bridge: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(EXIT_FAILED);
  },
);
