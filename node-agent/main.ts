// node-agent: one process per board that owns native hardware code (ARCHITECTURE.md). This is its
// composition root (STYLE.md 1): the only module here that reads process.env, argv and the host name.
//   node-agent pair   pairs the board by a 6-digit code (pair-command.ts, docs/node-agent.md)
//   node-agent [run]  the link to /v1/node and the serial/BLE adapters arrive with the hardware issue;
//                     until then it says so (and whether this board is paired) and exits with
//                     EX_UNAVAILABLE (69), so systemd does not restart-loop it.
import { setTimeout as sleep } from 'node:timers/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { discover } from '../mesh/mdns';
import { newPairCode } from '../mesh/pair-code';
import { parseAgentArgs, USAGE } from './command-line';
import { listNodeKeys } from './key-store';
import { EXIT_USAGE, pairCommand } from './pair-command';

const EX_UNAVAILABLE = 69;
const env = process.env;
const keyDir = env.SVC_NODE_KEY_DIR || join(homedir(), '.config', 'svc-node', 'keys');
const io = { out: process.stdout, err: process.stderr };
/** mDNS problems (port 5353 in use, no multicast route) are worth a line; its debug chatter is not. */
const mdnsLog = { warn: (obj: { err?: unknown }, msg: string) => void io.err.write(`node-agent: ${msg}${obj.err instanceof Error ? `: ${obj.err.message}` : ''}\n`), debug: () => undefined };

/** Whether this board holds a node key, as one line for `run`. */
async function pairedLine(): Promise<string> {
  let keys: string[];
  try {
    keys = await listNodeKeys(keyDir);
  } catch (err) {
    // An unreadable key directory must not turn 69 into a failure systemd would restart in a loop.
    if (!(err instanceof Error) || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    return `svc node-agent: cannot read the key directory ${keyDir} (${(err as NodeJS.ErrnoException).code})\n`;
  }
  if (keys.length === 0) return `svc node-agent: this board is not paired yet (no node key in ${keyDir}); \`node-agent pair\` pairs it\n`;
  return `svc node-agent: this board is paired (node key${keys.length > 1 ? 's' : ''} ${keys.map((k) => join(keyDir, k)).join(', ')})\n`;
}

async function main(args: readonly string[]): Promise<number> {
  const command = parseAgentArgs(args);
  switch (command.kind) {
    case 'help':
      io.out.write(USAGE);
      return 0;
    case 'usage':
      io.err.write(`node-agent: ${command.message}\n${USAGE}`);
      return EXIT_USAGE;
    case 'pair':
      return pairCommand(command.options, {
        io,
        envBrain: env.SVC_BRAIN_URL,
        defaultKeyDir: keyDir,
        hostname: hostname(),
        discover: (timeoutMs) => discover({ log: mdnsLog, kind: 'node', timeoutMs }),
        fetch: (url, init) => fetch(url, init),
        sleep: (ms) => sleep(ms),
        now: () => Date.now(),
        newCode: newPairCode,
      });
    case 'run':
      io.err.write(await pairedLine());
      io.err.write('svc node-agent: the hardware link is not available in this version of svc\n');
      return EX_UNAVAILABLE;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    io.err.write(`node-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
