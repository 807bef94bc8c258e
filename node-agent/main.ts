// node-agent: one process per board that owns native hardware code (ARCHITECTURE.md). This is its
// composition root (STYLE.md 1): the only module here that reads process.env, argv and the host name,
// and the only one that loads the native bindings (serialport, node-ble), lazily, when the config
// names a device that needs them.
//   node-agent pair   pairs the board by a 6-digit code (pair-command.ts, docs/node-agent.md)
//   node-agent [run]  links the board's devices to the brain over /v1/node (run-command.ts)
import { setTimeout as sleep } from 'node:timers/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { discover } from '../mesh/mdns';
import { newPairCode } from '../mesh/pair-code';
import type { AdapterLog } from './adapters/adapter';
import { serialportOpener } from './adapters/serial';
import { parseAgentArgs, USAGE, type PairOptions } from './command-line';
import type { BleDevice } from './config';
import { EXIT_USAGE, pairCommand } from './pair-command';
import { runCommand } from './run-command';
import { createAgentNotifier, watchdogEveryMs } from './sd-notify';

declare const __SVC_VERSION__: string;
const VERSION = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';
/** After SIGTERM the agent has this long to say node_bye and close its devices (the unit's TimeoutStopSec=10). */
const HARD_EXIT_MS = 8000;
const env = process.env;
const keyDir = env.SVC_NODE_KEY_DIR || join(homedir(), '.config', 'svc-node', 'keys');
const configFile = env.SVC_NODE_CONFIG || join(homedir(), '.config', 'svc-node', 'config.json');
const io = { out: process.stdout, err: process.stderr };
/** mDNS problems (port 5353 in use, no multicast route) are worth a line; its debug chatter is not. */
const mdnsLog = { warn: (obj: { err?: unknown }, msg: string) => void io.err.write(`node-agent: ${msg}${obj.err instanceof Error ? `: ${obj.err.message}` : ''}\n`), debug: () => undefined };

const pairContext = () => ({
  io,
  envBrain: env.SVC_BRAIN_URL,
  defaultKeyDir: keyDir,
  hostname: hostname(),
  discover: (timeoutMs: number) => discover({ log: mdnsLog, kind: 'node', timeoutMs }),
  fetch: (url: string, init: RequestInit) => fetch(url, init),
  sleep: (ms: number) => sleep(ms),
  now: () => Date.now(),
  newCode: newPairCode,
});

async function bleAdapter(device: BleDevice, log: AdapterLog) {
  const { BleAdapter, bleSessionsFor } = await import('./adapters/ble');
  return new BleAdapter(device, { open: bleSessionsFor(process.platform, { log, hci: device.hci }), log });
}

/** SIGTERM/SIGINT: stop cleanly, and exit anyway if that takes longer than systemd waits. */
function stopSignal(): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) return;
    controller.abort(new Error(signal));
    setTimeout(() => process.exit(1), HARD_EXIT_MS).unref();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return controller.signal;
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
      return pairCommand(command.options, pairContext());
    case 'run': {
      const log = pino({ base: { svc: 'node-agent' } });
      return runCommand(command.options, {
        io,
        log,
        envBrain: env.SVC_BRAIN_URL,
        envKey: env.SVC_NODE_KEY,
        defaultKeyDir: keyDir,
        defaultConfig: { file: configFile, explicit: Boolean(env.SVC_NODE_CONFIG) },
        hostname: hostname(),
        discover: (timeoutMs) => discover({ log: mdnsLog, kind: 'node', timeoutMs }),
        pair: (options: PairOptions, pairIo) => pairCommand(options, { ...pairContext(), io: pairIo }),
        serialOpener: () => serialportOpener(log.child({ part: 'serial' })),
        bleAdapter,
        notifier: createAgentNotifier(env, log),
        watchdogMs: watchdogEveryMs(env),
        stop: stopSignal(),
        agentVersion: VERSION,
        uptimeS: () => Math.round(process.uptime() * 10) / 10,
      });
    }
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
