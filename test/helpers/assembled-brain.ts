// A whole brain assembled in-process (daemon/brain.ts) with the real capability list and never started:
// its metrics are what GET /metrics serves, declared by every part that emits one, without a process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { assembleBrain, type Brain } from '../../daemon/brain';
import { CAPABILITIES } from '../../daemon/capabilities';
import { deepFreeze, parseSettings, settingsFormat } from '../../daemon/config/load-settings';
import { Lifecycle } from '../../daemon/lifecycle/lifecycle';
import { SecretScrubber } from '../../daemon/agent/tools/secret-scrubber';
import { stopParts } from '../../daemon/kernel/parts';

/** Assembles a brain (never started) from `settings.json` contents; stopped and removed after the test. */
export async function assembledBrain(t: { after(fn: () => unknown): void }, file: Record<string, unknown> = {}): Promise<Brain> {
  const home = mkdtempSync(join(tmpdir(), 'svc-brain-metrics-'));
  const logger = pino({ level: 'silent' });
  const settings = deepFreeze({ ...parseSettings({ server: { port: 0 }, ...file }, 'settings.json', settingsFormat(CAPABILITIES)) });
  const brain = await assembleBrain(
    { home, settings, logger, version: '0.0.0-test', lifecycle: new Lifecycle(), apiToken: randomBytes(16).toString('hex'), vaultKey: randomBytes(32), scrubber: new SecretScrubber() },
    CAPABILITIES,
  );
  t.after(async () => {
    await stopParts(brain.parts, logger, 2000);
    rmSync(home, { recursive: true, force: true });
  });
  return brain;
}
