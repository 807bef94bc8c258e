// A whole brain assembled in-process (daemon/brain.ts) on a fresh home: the real capability list or a
// given one, started (listening on a free port) or not. Tests of capabilities, metrics and the kernel
// seam use it instead of a process; it is stopped and its home removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { assembleBrain, type Brain } from '../../daemon/brain';
import { CAPABILITIES } from '../../daemon/capabilities';
import { deepFreeze, parseSettings, settingsFormat } from '../../daemon/config/load-settings';
import type { CapabilityDefinition } from '../../daemon/kernel/capability';
import { Lifecycle } from '../../daemon/lifecycle/lifecycle';
import { SecretScrubber } from '../../daemon/agent/tools/secret-scrubber';
import { startParts, stopParts } from '../../daemon/kernel/parts';

export interface InProcessBrain {
  brain: Brain;
  /** The API token, for `authorization: Bearer …`. */
  token: string;
  home: string;
  logger: Logger;
  /** Stops the parts (once); the home stays until the test ends, so a second brain on it is a restart. */
  stop: () => Promise<void>;
}

export async function inProcessBrain(
  t: { after(fn: () => unknown): void },
  opts: { capabilities?: readonly CapabilityDefinition[]; file?: Record<string, unknown>; home?: string; start?: boolean } = {},
): Promise<InProcessBrain> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'svc-brain-'));
  const capabilities = opts.capabilities ?? CAPABILITIES;
  const logger = pino({ level: 'silent' });
  const settings = deepFreeze({ ...parseSettings({ server: { port: 0 }, ...opts.file }, 'settings.json', settingsFormat(capabilities)) });
  const token = randomBytes(16).toString('hex');
  const brain = await assembleBrain({ home, settings, logger, version: '0.0.0-test', lifecycle: new Lifecycle(), apiToken: token, vaultKey: randomBytes(32), scrubber: new SecretScrubber() }, capabilities);
  if (opts.start !== false) await startParts(brain.parts, logger);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await stopParts(brain.parts, logger, 2000);
  };
  t.after(async () => {
    await stop();
    rmSync(home, { recursive: true, force: true });
  });
  return { brain, token, home, logger, stop };
}

/** Assembles a brain (never started) with the real capabilities from `settings.json` contents. */
export async function assembledBrain(t: { after(fn: () => unknown): void }, file: Record<string, unknown> = {}): Promise<Brain> {
  return (await inProcessBrain(t, { file, start: false })).brain;
}
