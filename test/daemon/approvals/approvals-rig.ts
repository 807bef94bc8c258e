// A started brain for the approvals tests: the real capability list plus `rig`, a test capability that
// owns the privileged tool `reboot` (counting its runs), hears the bus and hands out its context.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { assembleBrain, type Brain } from '../../../daemon/brain';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { deepFreeze, parseSettings, settingsFormat } from '../../../daemon/config/load-settings';
import { defineCapability, type CapabilityContext } from '../../../daemon/kernel/capability';
import { defineTool } from '../../../daemon/kernel/tool';
import { Lifecycle } from '../../../daemon/lifecycle/lifecycle';
import { SecretScrubber } from '../../../daemon/agent/tools/secret-scrubber';
import { startParts, stopParts } from '../../../daemon/kernel/parts';
import type { BrainEvent } from '../../../daemon/kernel/events';

export interface Rig {
  brain: Brain;
  context: CapabilityContext;
  runs: unknown[];
  events: BrainEvent[];
  api(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers?: Record<string, string>): Promise<{ statusCode: number; body: string; json(): unknown }>;
  queued(): Promise<string | undefined>;
  /** Stops the brain, keeping its home (a second rig on the same home is a restart). */
  stop(): Promise<void>;
}

/** A started brain with the real capabilities plus `rig`, which owns the privileged tool `reboot`; `home` reuses a data directory. */
export async function approvalsRig(t: { after(fn: () => unknown): void }, file: Record<string, unknown> = {}, home = mkdtempSync(join(tmpdir(), 'svc-approvals-brain-'))): Promise<Rig> {
  const runs: unknown[] = [];
  const events: BrainEvent[] = [];
  let captured: CapabilityContext | undefined;
  const rig = defineCapability({
    name: 'rig',
    create: (context) => {
      captured = context;
      context.bus.on('rig', (e) => events.push(e));
      return { tools: [defineTool({ spec: { name: 'reboot', description: 'Reboots the host.', parameters: Type.Object({ delay: Type.Integer() }) }, safety: 'privileged', run: async (args) => (runs.push(args), { summary: `rebooting in ${args.delay}s` }) })] };
    },
  });
  const capabilities = [...CAPABILITIES, rig];
  const settings = deepFreeze({ ...parseSettings({ server: { port: 0 }, ...file }, 'settings.json', settingsFormat(capabilities)) });
  const logger = pino({ level: 'silent' });
  const token = randomBytes(16).toString('hex');
  const brain = await assembleBrain({ home, settings, logger, version: '0.0.0-test', lifecycle: new Lifecycle(), apiToken: token, vaultKey: randomBytes(32), scrubber: new SecretScrubber() }, capabilities);
  await startParts(brain.parts, logger);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopParts(brain.parts, logger, 2000);
  };
  t.after(async () => {
    await stop();
    rmSync(home, { recursive: true, force: true });
  });
  assert.ok(captured);
  return {
    brain,
    context: captured,
    runs,
    events,
    stop,
    api: (method, url, payload, headers = {}) =>
      brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, ...headers }, ...(payload === undefined ? {} : { payload: payload as string }) }),
    queued: async () => /^svc_supervisor_approval_queue (\d+)$/m.exec((await brain.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).body)?.[1],
  };
}

