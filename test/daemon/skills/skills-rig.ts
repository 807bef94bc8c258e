// The skills capability on real parts for its unit tests: a home folder in the system's temp folder,
// brain.db (SQLite) with the skills and audit tables, the real tool registry with a few tools (echo
// passive, reveal active — it answers a vault secret —, reboot privileged), a permission plane whose
// verdict the test sets, the brain's secret scrubber knowing one secret, the real sandbox pool (the
// built worker in .test-build), publisher keys pinned in a Map, and the Skills service itself.
// `restart()` stops it and starts a new one over the same home and store file, as a brain restart does.
// Skill folders are written by `writeSkill` and signed with signing/skill-signature.ts.
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { Type } from '@sinclair/typebox';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { defineTool } from '../../../daemon/kernel/tool';
import { PermissionPlane, type PermissionDecision, type PermissionRequest } from '../../../daemon/kernel/permissions';
import { SecretScrubber } from '../../../daemon/agent/tools/secret-scrubber';
import { AuditLog } from '../../../daemon/audit/audit-log';
import { SandboxPool } from '../../../skills/sandbox-pool';
import { SkillInstaller } from '../../../daemon/skills/skill-installer';
import { SkillRunner } from '../../../daemon/skills/skill-runner';
import { SKILL_MIGRATIONS, SkillStore } from '../../../daemon/skills/skill-store';
import { SkillTriggers } from '../../../daemon/skills/skill-triggers';
import { Skills } from '../../../daemon/skills/skills';
import { rawPublicKey, keyIdOf, type SigningKey } from '../../../signing/ed25519';
import { signSkillDir } from '../../../signing/skill-signature';

export const MiB = 1024 * 1024;
/** A secret the scrubber knows; the `reveal` tool answers it. */
export const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c';

export interface TestKey extends SigningKey {
  readonly publicKey: string;
}

/** A fresh Ed25519 publisher key. */
export function newKey(): TestKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { keyId: keyIdOf(publicKey), publicKey, privateKey };
}

export interface SkillSpec {
  id?: string;
  version?: string;
  source?: string;
  params?: Record<string, unknown>;
  tools?: string[];
  triggers?: Record<string, unknown>[];
  /** Extra manifest fields (or overrides). */
  extra?: Record<string, unknown>;
}

export function manifestOf(spec: SkillSpec = {}): Record<string, unknown> {
  return {
    id: spec.id ?? 'greeter',
    name: `Skill ${spec.id ?? 'greeter'}`,
    version: spec.version ?? '1.0.0',
    description: 'A skill written by a test.',
    entry: 'main.js',
    params: spec.params ?? { type: 'object', properties: { name: { type: 'string' } } },
    permissions: { network: { allow: [] }, tools: spec.tools ?? [] },
    triggers: spec.triggers ?? [{ type: 'manual' }],
    ...spec.extra,
  };
}

/** Writes a skill folder under `parent` (manifest.json and main.js); signed by `key` when given. */
export function writeSkill(parent: string, spec: SkillSpec = {}, key?: SigningKey): string {
  const dir = mkdtempSync(join(parent, 'skill-'));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifestOf(spec), null, 2));
  writeFileSync(join(dir, 'main.js'), spec.source ?? 'function main(p) { return { hello: p.name ?? "world" }; }');
  if (key) signSkillDir(dir, key);
  return dir;
}

export interface SkillsRig {
  home: string;
  /** A folder for skill sources (outside the home). */
  work: string;
  skills: Skills;
  store: SkillStore;
  installer: SkillInstaller;
  audit: AuditLog;
  tools: ToolRegistry;
  bus: EventBus<BrainEvent>;
  pinned: Map<string, string>;
  /** Every permission request the skills made. */
  requests: PermissionRequest[];
  /** The verdict the plane gives (default allow). */
  verdict: (request: PermissionRequest) => PermissionDecision;
  kills: string[];
  /** What the service logged at warn and above. */
  warnings: string[];
  trust(key: TestKey): void;
  restart(): Promise<void>;
}

export interface RigOptions {
  wallMs?: number;
  memoryBytes?: number;
  /** A folder of first-party skill folders (default none). */
  builtinDir?: string | null;
}

function capturingLogger(into: string[]): Logger {
  return pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        into.push(chunk.toString());
        done();
      },
    }),
  );
}

export async function skillsRig(t: { after(fn: () => unknown): void }, opts: RigOptions = {}): Promise<SkillsRig> {
  const home = mkdtempSync(join(tmpdir(), 'svc-skills-'));
  const work = join(home, 'work');
  mkdirSync(work);
  const warnings: string[] = [];
  const logger = capturingLogger(warnings);
  const tools = new ToolRegistry();
  tools.register('rig', defineTool({ spec: { name: 'echo', description: 'Echoes.', parameters: Type.Object({ text: Type.String() }) }, safety: 'passive', run: async ({ text }) => ({ summary: `echo ${text}`, data: { text } }) }));
  tools.register('rig', defineTool({ spec: { name: 'reveal', description: 'Answers a secret.', parameters: Type.Object({}) }, safety: 'active', run: async () => ({ summary: `the key is ${SECRET}`, data: { key: SECRET } }) }));
  tools.register('rig', defineTool({ spec: { name: 'reboot', description: 'Reboots.', parameters: Type.Object({}) }, safety: 'privileged', run: async () => ({ summary: 'rebooting' }) }));
  const bus = new EventBus<BrainEvent>((_owner, err) => {
    throw err;
  });
  const pinned = new Map<string, string>();
  const requests: PermissionRequest[] = [];
  const permissions = new PermissionPlane();
  const pool = new SandboxPool({ size: 2, idleMs: 60_000 });
  const scrubber = new SecretScrubber(() => [SECRET]);
  const kills: string[] = [];
  let sqlite: SqliteStore;
  const open = (): Pick<SkillsRig, 'skills' | 'store' | 'installer' | 'audit'> => {
    sqlite = new SqliteStore(join(home, 'brain.db'));
    sqlite.migrate('skills', SKILL_MIGRATIONS);
    const audit = new AuditLog(sqlite, () => Date.now());
    const store = new SkillStore(sqlite);
    const installer = new SkillInstaller({ dir: join(home, 'skills'), pinned: (id) => pinned.get(id) });
    const clock = { now: () => Date.now() };
    const runner = new SkillRunner({ executor: pool, tools, permissions, secrets: scrubber, clock, logger, limits: { wallMs: opts.wallMs ?? 3000, memoryBytes: opts.memoryBytes ?? 16 * MiB }, killed: (reason) => kills.push(reason) });
    const triggers: SkillTriggers = new SkillTriggers(bus, (id, trigger, params) => skills.triggered(id, trigger, params), logger);
    const skills: Skills = new Skills({ store, installer, runner, triggers, tools, pinned: (id) => pinned.get(id), audit, clock, logger, builtinDir: opts.builtinDir ?? null });
    return { skills, store, installer, audit };
  };
  const rig: SkillsRig = {
    home,
    work,
    ...open(),
    tools,
    bus,
    pinned,
    requests,
    verdict: () => ({ verdict: 'allow' }),
    kills,
    warnings,
    trust: (key) => void pinned.set(key.keyId, key.publicKey),
    restart: async () => {
      rig.skills.stop();
      sqlite.close();
      // A new process starts with a registry holding none of the skills' tools.
      for (const name of tools.names()) if (tools.ownerOf(name)?.startsWith('skill:')) tools.unregister(name);
      Object.assign(rig, open());
      await rig.skills.start();
    },
  };
  permissions.use('rig', {
    check: (request) => {
      requests.push(request);
      return rig.verdict(request);
    },
  });
  await rig.skills.start();
  t.after(async () => {
    rig.skills.stop();
    await pool.close();
    sqlite.close();
    rmSync(home, { recursive: true, force: true });
  });
  return rig;
}

/** Polls `ready()` every 20 ms, at most `tries` times. */
export async function until(what: string, ready: () => boolean, tries = 250): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`not reached: ${what}`);
}
