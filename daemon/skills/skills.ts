// The brain's skills (issue 16 "Skills", spec 1.11, 2.8, 4.3; docs/skills.md): the first-party skills
// that come with svc, and those installed into <home>/skills, each with a status — active (its tool is
// offered and its triggers are armed), disabled (by the user) or error (its files on disk no longer
// check out: the reason is shown). An active skill is a tool `skill_<id>` (owner `skill:<id>`) whose
// arguments are the manifest's params; installing, upgrading, disabling and removing add and remove
// it at run time. Signed skills are checked again at every start, so a publisher key the operator no
// longer trusts turns its skills to error.
import { readdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { readSkillDir } from '../../skills/manifest';
import type { SkillDetail, SkillInstallBody, SkillInstallResult, SkillListItem, SkillManifest, SkillRunView } from '../../protocol/skills';
import type { PinnedKeys } from '../../signing/signed-manifest';
import type { AuditTrail } from '../kernel/ports';
import type { Clock } from '../kernel/capability';
import type { ToolRegistry } from '../kernel/tool-registry';
import { AppError, notFound, UnverifiedManifestError } from '../kernel/errors';
import { OneAtATime } from '../kernel/one-at-a-time';
import { defineTool, ToolFailure, type SafetyLevel } from '../kernel/tool';
import { Type } from '@sinclair/typebox';
import { checkBundle, filesOfDir } from './skill-bundle';
import type { SkillInstaller } from './skill-installer';
import { toolNameOf, type RunnableSkill, type SkillRunner } from './skill-runner';
import { statusOf, type SkillRecord, type SkillStore } from './skill-store';
import type { SkillTriggers } from './skill-triggers';
import { compareVersions } from './semver';

/** The source of a first-party skill: it comes with svc, cannot be removed, only disabled. */
export const BUILTIN = 'builtin';
/** The session a run outside any conversation belongs to (its held calls join this session's approvals). */
export const SKILL_SESSION = 'dashboard';

interface Loaded {
  readonly record: SkillRecord;
  /** Undefined while the skill's files do not check out (status error). */
  readonly skill: RunnableSkill | undefined;
  readonly error: string | null;
}

export interface SkillsDeps {
  store: SkillStore;
  installer: SkillInstaller;
  runner: SkillRunner;
  triggers: SkillTriggers;
  tools: ToolRegistry;
  pinned: PinnedKeys;
  audit: AuditTrail;
  clock: Clock;
  logger: Logger;
  /** Where the first-party skills are (a folder of skill folders); null when this build has none. */
  builtinDir: string | null;
}

export class Skills {
  private readonly loaded = new Map<string, Loaded>();
  /** Installs, removals and enable/disable run one at a time: each reads what the one before left. */
  /** Install, remove, enable and disable, one at a time (two installs of one skill raced to a 500). */
  private readonly changes = new OneAtATime();

  constructor(private readonly deps: SkillsDeps) {}

  async start(): Promise<void> {
    const swept = await this.deps.installer.sweep();
    if (swept.length > 0) this.deps.logger.warn({ removed: swept }, 'removed what an interrupted skill install left');
    const records = new Map(this.deps.store.all().map((r) => [r.id, r]));
    const builtins = await this.builtinIds();
    for (const id of builtins) await this.loadBuiltin(id, records.get(id));
    for (const record of records.values()) {
      if (record.source === BUILTIN) continue;
      // A build that now ships a first-party skill of the same id: the first-party one is the skill.
      if (builtins.includes(record.id)) this.deps.logger.warn({ skill: record.id }, 'an installed skill has the id of a first-party skill; the first-party one is used');
      else await this.load(record);
    }
    for (const dir of await this.deps.installer.installedDirs()) {
      if (!records.has(dir)) this.deps.logger.warn({ dir }, 'a skill folder without an install record is ignored (an install that did not finish)');
    }
  }

  stop(): void {
    this.deps.triggers.stop();
  }

  list(): SkillListItem[] {
    return [...this.loaded.values()].map((l) => this.item(l)).sort((a, b) => a.id.localeCompare(b.id));
  }

  detail(id: string): SkillDetail {
    const l = this.get(id);
    return {
      ...this.item(l),
      manifest: l.skill?.manifest ?? null,
      source: l.record.source,
      signed_by: l.record.signedBy,
      unsigned: l.record.unsigned,
      error: l.error,
      tool: toolNameOf(id),
      installed_at: l.record.installedAt / 1000,
      recent_runs: this.deps.store.runs(id),
    };
  }

  /** Installs or upgrades a skill (409 when the same or a newer version is installed, or it ships with svc). */
  install(body: SkillInstallBody, actor: string): Promise<SkillInstallResult> {
    return this.changes.run(() => this.installNow(body, actor));
  }

  private async installNow(body: SkillInstallBody, actor: string): Promise<SkillInstallResult> {
    const bundle = await this.deps.installer.check(body);
    const { manifest } = bundle;
    const existing = this.loaded.get(manifest.id);
    if (existing?.record.source === BUILTIN) throw new AppError('CONFLICT', `skill ${manifest.id} ships with svc; it cannot be replaced by an install`, { id: manifest.id });
    if (existing && existing.error === null && compareVersions(manifest.version, existing.record.version) <= 0) {
      throw new AppError('CONFLICT', `skill ${manifest.id} is already installed (version ${existing.record.version}); only a newer version upgrades it`, { id: manifest.id, installed: existing.record.version, offered: manifest.version });
    }
    const subject = `skill:${manifest.id}@${manifest.version}`;
    const source = bundle.source.kind === 'path' ? bundle.source.path : bundle.source.url;
    // Recorded before the skill exists: an unsigned install the log does not show did not happen.
    if (bundle.signedBy === null) await this.deps.audit.record({ tag: 'unsigned_install', actor, subject, details: { source } });
    await this.deps.installer.place(bundle);
    const record: Omit<SkillRecord, 'disabled'> = { id: manifest.id, version: manifest.version, source: bundle.source.kind, signedBy: bundle.signedBy, unsigned: bundle.signedBy === null, installedAt: this.deps.clock.now() };
    await this.deps.store.put(record);
    this.unload(manifest.id);
    await this.load({ ...record, disabled: existing?.record.disabled ?? false });
    this.deps.logger.info({ skill: manifest.id, version: manifest.version, signed_by: bundle.signedBy, source }, existing ? 'skill upgraded' : 'skill installed');
    return { skill: this.item(this.get(manifest.id)), signed_by: bundle.signedBy, unsigned: bundle.signedBy === null, upgraded_from: existing?.record.version ?? null };
  }

  remove(id: string): Promise<void> {
    return this.changes.run(() => this.removeNow(id));
  }

  private async removeNow(id: string): Promise<void> {
    const l = this.get(id);
    if (l.record.source === BUILTIN) throw new AppError('CONFLICT', `skill ${id} ships with svc; disable it instead (svc skills disable ${id})`, { id });
    this.unload(id);
    await this.deps.store.remove(id);
    await this.deps.installer.remove(id);
    this.deps.logger.info({ skill: id }, 'skill removed');
  }

  setEnabled(id: string, enabled: boolean): Promise<SkillListItem> {
    return this.changes.run(() => this.setEnabledNow(id, enabled));
  }

  private async setEnabledNow(id: string, enabled: boolean): Promise<SkillListItem> {
    const l = this.get(id);
    await this.deps.store.setDisabled(id, !enabled);
    this.unload(id);
    const record = { ...l.record, disabled: !enabled };
    this.activate(record, l.skill, l.error);
    return this.item(this.get(id));
  }

  /** Runs an active skill now (POST /api/skills/:id/execute, svc skills run): params checked against its manifest. */
  async execute(id: string, params: Record<string, unknown>, trigger: string, sessionId: string): Promise<SkillRunView> {
    const l = this.get(id);
    if (l.skill === undefined) throw new AppError('CONFLICT', `skill ${id} cannot run: ${l.error ?? 'its files are missing'}`, { id, status: 'error' });
    if (l.record.disabled) throw new AppError('CONFLICT', `skill ${id} is disabled; enable it first (svc skills enable ${id})`, { id, status: 'disabled' });
    const problems = this.deps.tools.problems(toolNameOf(id), params);
    if (problems.length > 0) throw new AppError('BAD_REQUEST', `invalid params for skill ${id}: ${problems.join('; ')}`, { problems });
    return this.runNow(l.skill, params, trigger, sessionId);
  }

  private async runNow(skill: RunnableSkill, params: Record<string, unknown>, trigger: string, sessionId: string): Promise<SkillRunView> {
    const view = await this.deps.runner.run({ skill, params, trigger, sessionId });
    await this.deps.store.addRun(skill.manifest.id, view);
    return view;
  }


  private get(id: string): Loaded {
    const l = this.loaded.get(id);
    if (!l) throw notFound('skill', id);
    return l;
  }

  private item(l: Loaded): SkillListItem {
    return { id: l.record.id, name: l.skill?.manifest.name ?? l.record.id, version: l.record.version, status: statusOf(l.record.disabled, l.error) };
  }

  private async builtinIds(): Promise<string[]> {
    if (this.deps.builtinDir === null) return [];
    return (await readdir(this.deps.builtinDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  }

  private async loadBuiltin(id: string, record: SkillRecord | undefined): Promise<void> {
    const dir = `${this.deps.builtinDir}/${id}`;
    const read = await readSkillDir(dir);
    const version = read.ok ? read.skill.manifest.version : (record?.version ?? '0.0.0');
    const current: SkillRecord = { id, version, source: BUILTIN, signedBy: null, unsigned: false, disabled: record?.disabled ?? false, installedAt: record?.installedAt ?? this.deps.clock.now() };
    if (!record || record.version !== version) await this.deps.store.put(current);
    if (!read.ok) return this.activate(current, undefined, `the first-party skill's files are broken: ${read.problems.join('; ')}`);
    this.activate(current, { manifest: read.skill.manifest, source: read.skill.source }, null);
  }

  /** Loads an installed skill from its folder, checking its files and signature again. */
  private async load(record: SkillRecord): Promise<void> {
    const dir = this.deps.installer.dirOf(record.id);
    try {
      const bundle = checkBundle(await filesOfDir(dir), this.deps.pinned, record.unsigned);
      if (bundle.manifest.id !== record.id || bundle.manifest.version !== record.version) {
        throw new AppError('BAD_REQUEST', `its folder holds ${bundle.manifest.id}@${bundle.manifest.version}, not the version installed`);
      }
      const source = Buffer.from(bundle.files.get(bundle.manifest.entry)!).toString('utf8');
      this.activate(record, { manifest: bundle.manifest, source }, null);
    } catch (err) {
      const reason =
        err instanceof UnverifiedManifestError
          ? `${err.reason}: ${err.message}`
          : err instanceof AppError && err.status === 400
            ? err.message
            : err instanceof AppError && err.status === 404
              ? 'its folder is missing'
              : isFsError(err)
                ? `its folder cannot be read (${err.code}: ${err.message})`
                : undefined;
      if (reason === undefined) throw err;
      this.deps.logger.warn({ skill: record.id, reason }, 'skill files no longer check out; its status is error');
      this.activate(record, undefined, reason);
    }
  }

  private activate(record: SkillRecord, skill: RunnableSkill | undefined, error: string | null): void {
    this.loaded.set(record.id, { record, skill, error });
    if (skill === undefined || record.disabled || error !== null) return;
    this.deps.tools.register(`skill:${record.id}`, this.toolOf(skill));
    this.deps.triggers.arm(skill.manifest);
  }

  private unload(id: string): void {
    this.deps.tools.removeOwner(`skill:${id}`);
    this.deps.triggers.disarm(id);
    this.loaded.delete(id);
  }

  /** A triggered run (schedule, event) of an active skill. */
  async triggered(id: string, trigger: string, params: Record<string, unknown>): Promise<void> {
    const l = this.loaded.get(id);
    if (!l?.skill || l.record.disabled || l.error !== null) return;
    const view = await this.runNow(l.skill, params, trigger, SKILL_SESSION);
    if (view.status !== 'ok') this.deps.logger.info({ skill: id, trigger, status: view.status, message: view.message }, 'triggered skill run did not finish');
  }

  private toolOf(skill: RunnableSkill) {
    const { manifest } = skill;
    return defineTool({
      spec: { name: toolNameOf(manifest.id), description: `${manifest.name}: ${manifest.description}`.slice(0, 1024), parameters: Type.Unsafe<Record<string, unknown>>(plainSchema(manifest.params)) },
      safety: safetyOf(manifest),
      run: async (args, ctx) => {
        const view = await this.runNow(skill, args, 'tool', ctx.sessionId);
        if (view.status === 'ok') return { summary: `${manifest.name} ran`, data: view.result };
        throw new ToolFailure(view.status === 'held' ? view.message! : `skill ${manifest.id} was stopped (${view.kill!}): ${view.message!}`);
      },
    });
  }
}

/** A file system refusal (EACCES, EIO…): the skill shows status error instead of stopping the brain. */
const isFsError = (err: unknown): err is NodeJS.ErrnoException => err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';

/** A manifest's params as a plain JSON Schema (no TypeBox Kind: the registry checks it with Ajv). */
const plainSchema = (params: SkillManifest['params']): Record<string, unknown> => JSON.parse(JSON.stringify(params)) as Record<string, unknown>;

/**
 * A skill's tool's own safety: passive when it reaches nothing (no network, no tools), active otherwise.
 * Each tool it calls is checked again on its own level, so a skill adds no reach its calls do not have.
 */
export const safetyOf = (manifest: SkillManifest): SafetyLevel => (manifest.permissions.network.allow.length === 0 && manifest.permissions.tools.length === 0 ? 'passive' : 'active');
