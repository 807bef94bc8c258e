// The skills capability (issue 16 "Skills", spec 1.11, 2.8, 4.3, 4.12; docs/skills.md): installed and
// first-party skills, their tools and triggers, /api/skills, and svc_sandbox_kills_total. Runs go to a
// pool of worker threads (skills/sandbox-pool.ts) started on the first run and ended when idle, so a
// brain whose skills never run holds no worker and no WebAssembly memory.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { SandboxPool } from '../../skills/sandbox-pool';
import { PUBLISHER_KEYS_NAMESPACE } from '../../protocol/publishers';
import { SKILL_KILL_REASONS } from '../../protocol/skills';
import { defineCapability } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import { SkillInstaller } from './skill-installer';
import { SkillRunner } from './skill-runner';
import { SKILL_MIGRATIONS, SkillStore } from './skill-store';
import { SkillTriggers } from './skill-triggers';
import { Skills } from './skills';
import { skillRoutes } from './skill-routes';

export const SkillSettings = Type.Object(
  {
    memory_mb: Type.Integer({ minimum: 8, maximum: 256, default: 64, description: 'Memory limit of one skill run, in MiB' }),
    wall_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000, description: 'Wall-time limit of one skill run (host calls included), in ms' }),
    concurrent_runs: Type.Integer({ minimum: 1, maximum: 8, default: 1, description: 'Skill runs at once, one worker thread each; more wait (at most 64)' }),
    idle_worker_ms: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000, description: 'A sandbox worker with nothing to do for this long ends, freeing its memory' }),
  },
  { additionalProperties: false, default: {} },
);

/**
 * Where the first-party skills are: builtin-skills/ next to the bundle (dist/), or else skills/builtin/
 * of the source tree the module sits in (the first folder above it with a package.json), never any
 * other folder that happens to have that name.
 */
export function builtinSkillsDir(from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  const bundled = join(from, 'builtin-skills');
  if (existsSync(bundled)) return bundled;
  let dir = from;
  for (let level = 0; level < 6; level++) {
    if (existsSync(join(dir, 'package.json'))) {
      const tree = join(dir, 'skills', 'builtin');
      return existsSync(tree) ? tree : null;
    }
    dir = dirname(dir);
  }
  return null;
}

export const skillsCapability = defineCapability({
  name: 'skills',
  settings: SkillSettings,
  create: (context, settings) => {
    const kills = context.metrics.counter<'reason'>('skills', {
      name: 'svc_sandbox_kills_total',
      help: 'Sandboxed skills killed, by reason',
      labels: ['reason'],
      zero: SKILL_KILL_REASONS.map((reason) => ({ reason })),
    });
    const pinned = (keyId: string): string | undefined => context.vault.get(PUBLISHER_KEYS_NAMESPACE, keyId);
    const pool = new SandboxPool({ size: settings.concurrent_runs, idleMs: settings.idle_worker_ms });
    const store = new SkillStore(context.store);
    const installer = new SkillInstaller({ dir: join(context.home, 'skills'), pinned });
    const runner = new SkillRunner({
      executor: pool,
      tools: context.tools,
      permissions: context.permissions,
      secrets: context.core.secrets,
      clock: context.clock,
      logger: context.logger,
      limits: { memoryBytes: settings.memory_mb * 1024 * 1024, wallMs: settings.wall_ms },
      killed: (reason) => kills.inc({ reason }),
    });
    // Triggers fire only once the skills have started, so the closure never meets an uninitialised `skills`.
    const triggers: SkillTriggers = new SkillTriggers(context.bus, (id, trigger, params): Promise<void> => skills.triggered(id, trigger, params), context.logger);
    const skills: Skills = new Skills({ store, installer, runner, triggers, tools: context.tools, pinned, audit: context.core.audit, clock: context.clock, logger: context.logger, builtinDir: builtinSkillsDir() });
    // The skills load after the brain listens (reading the first-party and installed skills' files took
    // ~12 ms of every start); /api/skills waits for them, and their tools and triggers appear once loaded.
    // The outcome of loading, never a rejected promise: a failure is logged once and answered (503) by every request.
    let loaded: Promise<AppError | null> = Promise.resolve(null);
    const start = (): void => {
      loaded = skills.start().then(
        () => null,
        (err: unknown) => {
          context.logger.error({ err }, 'the skills could not be loaded');
          return new AppError('UNAVAILABLE', `the skills could not be loaded: ${(err as Error).message}`);
        },
      );
    };
    const ready = async (): Promise<void> => {
      const failure = await loaded;
      if (failure) throw failure;
    };
    return {
      migrations: SKILL_MIGRATIONS,
      parts: [{ name: 'skills', start, stop: async () => (await loaded, skills.stop(), await pool.close()) }],
      routes: [skillRoutes(skills, ready)],
    };
  },
});
