// A started brain for the approvals tests: the real capability list plus `rig`, a test capability that
// owns the privileged tool `reboot` (counting its runs), hears the bus and hands out its context.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { type Brain } from '../../../daemon/brain';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { defineCapability, type CapabilityContext } from '../../../daemon/kernel/capability';
import { defineTool } from '../../../daemon/kernel/tool';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { inProcessBrain } from '../../helpers/assembled-brain';

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
  const { brain, token, stop } = await inProcessBrain(t, { capabilities: [...CAPABILITIES, rig], file, home });
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

