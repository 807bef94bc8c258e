// svc skills (spec 4.14; docs/skills.md "From the command line"): the brain's skills.
//   svc skills [list] [--json]                       id, name, version, status
//   svc skills show <id> [--json]                    manifest, status, source, signature, recent runs
//   svc skills run <id> [--params JSON] [--json]     run it now; exit 0 ok, 1 stopped or held for approval
//   svc skills install <path|url> [--allow-unsigned] [--json]
//   svc skills remove|enable|disable <id> [--json]
//   svc skills sign <dir> --key-id <key_id> [--json] add the file digests and write manifest.signed.json
// install takes a skill folder or .tar.gz on this machine (made absolute here: the brain reads it) or an
// https URL; a refusal of trust prints the reason the brain gave (unsigned, unknown_key, …) and what to do.
import { resolve } from 'node:path';
import type { Sade } from 'sade';
import type { SkillDetail, SkillInstallResult, SkillList, SkillListItem, SkillRunView } from '../../protocol/skills';
import { KEY_ID_PATTERN } from '../../protocol/signing';
import { CanonicalJsonError } from '../../signing/canonical-json';
import { loadOrCreatePublisherKey, PublisherKeyError } from '../../signing/publisher-key';
import { ManifestFileError } from '../../signing/signed-manifest-file';
import { signSkillDir } from '../../signing/skill-signature';
import { callBrain, type Connection } from '../connection';
import { reportError, str, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const SKILLS_USAGE = `svc skills [list] [--json]
svc skills show <id> [--json]
svc skills run <id> [--params JSON] [--json]
svc skills install <path|url> [--allow-unsigned] [--json]
svc skills remove <id> [--json]
svc skills enable <id> [--json]
svc skills disable <id> [--json]
svc skills sign <dir> --key-id <key_id> [--json]
`;

/** A run waits this long for the brain: the sandbox's longest wall time plus a queue. */
const RUN_TIMEOUT_MS = 120_000;
const INSTALL_TIMEOUT_MS = 60_000;
const json = (body: unknown): string => `${JSON.stringify(body)}\n`;
const enc = encodeURIComponent;

interface UnverifiedBody {
  error: 'UnverifiedManifest';
  reason: string;
  message: string;
}
const isUnverified = (body: unknown): body is UnverifiedBody => typeof body === 'object' && body !== null && (body as { error?: unknown }).error === 'UnverifiedManifest';

/** What to do about each refusal of trust. */
const TRUST_FIX: Readonly<Record<string, string>> = {
  unsigned: 'sign it (svc skills sign <dir> --key-id <id>), or install it unsigned on purpose with --allow-unsigned (recorded in the audit log)',
  unknown_key: 'if you trust this publisher, pin their key: svc publisher trust <key_id> <public_key>',
  key_mismatch: 'the key id is pinned to another public key here; check with the publisher before changing it (svc publisher untrust, then trust)',
};

/** Prints a refusal: a trust refusal with its reason and fix, anything else as the brain said it. */
function refused(io: Pick<CliIo, 'err'>, status: number, body: unknown): number {
  if (status !== 422 || !isUnverified(body)) return reportError(io, status, body);
  io.err.write(`svc: not installed: ${body.reason}: ${body.message}\n`);
  const fix = TRUST_FIX[body.reason];
  if (fix) io.err.write(`fix: ${fix}\n`);
  return 1;
}

// ── list and show ──────────────────────────────────────────────────────────────────────────────

export function describeList(skills: readonly SkillListItem[]): string {
  if (skills.length === 0) return 'no skills (svc skills install <path|url>)\n';
  return table([['ID', 'NAME', 'VERSION', 'STATUS'], ...skills.map((s) => [s.id, s.name, s.version, s.status])]);
}

export async function skillsList(conn: Connection, io: CliIo, args: { json: boolean }): Promise<number> {
  const r = await callBrain<SkillList>(conn, 'GET', '/api/skills');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describeList(r.body.skills));
  return 0;
}

export function describeRun(run: SkillRunView): string {
  const head = run.status === 'ok' ? `ok in ${run.duration_ms} ms` : run.status === 'held' ? `held for approval (request ${run.request_id ?? '?'})` : `stopped: ${run.kill ?? 'error'}`;
  const lines = [head];
  if (run.status === 'ok') lines.push(`result: ${JSON.stringify(run.result ?? null)}`);
  else if (run.message) lines.push(run.message);
  if (run.status === 'held') lines.push(`approve it: svc twin approvals approve ${run.request_id ?? '<id>'} (the call runs once approved; the rest of the skill does not)`);
  for (const line of run.logs ?? []) lines.push(`log: ${line}`);
  return `${lines.join('\n')}\n`;
}

export function describeDetail(d: SkillDetail, now: number): string {
  const manifest = d.manifest as { description?: string; permissions?: { network?: { allow?: string[] }; tools?: string[] }; triggers?: unknown[] } | null;
  const lines = [
    `${d.name} (${d.id}) ${d.version}: ${d.status}${d.error ? ` — ${d.error}` : ''}`,
    `source: ${d.source}; ${d.signed_by ? `signed by ${d.signed_by}` : d.unsigned ? 'unsigned (installed with --allow-unsigned)' : 'ships with svc'}`,
    `tool: ${d.tool}`,
  ];
  if (manifest?.description) lines.push(`about: ${manifest.description}`);
  if (manifest?.permissions) lines.push(`reaches: ${(manifest.permissions.network?.allow ?? []).join(', ') || 'no network'}; tools: ${(manifest.permissions.tools ?? []).join(', ') || 'none'}`);
  if (manifest?.triggers) lines.push(`triggers: ${manifest.triggers.map((t) => JSON.stringify(t)).join(' ')}`);
  if (d.recent_runs.length > 0) {
    lines.push('recent runs:');
    for (const run of d.recent_runs.slice(0, 5)) {
      const when = `${Math.max(0, Math.round(now / 1000 - run.started_at))} s ago`;
      lines.push(`  ${when}  ${run.trigger}  ${run.status}${run.kill ? ` (${run.kill})` : ''}${run.message ? `: ${run.message.slice(0, 120)}` : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function skillsShow(conn: Connection, io: CliIo, args: { id: string; json: boolean; now?: () => number }): Promise<number> {
  const r = await callBrain<SkillDetail>(conn, 'GET', `/api/skills/${enc(args.id)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describeDetail(r.body, (args.now ?? Date.now)()));
  return 0;
}

// ── run ────────────────────────────────────────────────────────────────────────────────────────

/** --params as an object, or what is wrong with it. */
export function parseParams(text: string | undefined): { ok: true; params: Record<string, unknown> } | { ok: false; problem: string } {
  if (text === undefined) return { ok: true, params: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return { ok: false, problem: `--params is not JSON: ${err.message}` };
    throw err;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, problem: '--params is a JSON object: --params \'{"value": 3, "from": "ft", "to": "m"}\'' };
  return { ok: true, params: value as Record<string, unknown> };
}

export async function skillsRun(conn: Connection, io: CliIo, args: { id: string; params?: string | undefined; json: boolean }): Promise<number> {
  const parsed = parseParams(args.params);
  if (!parsed.ok) {
    io.err.write(`svc: ${parsed.problem}\n`);
    return 2;
  }
  const r = await callBrain<SkillRunView>(conn, 'POST', `/api/skills/${enc(args.id)}/execute`, { params: parsed.params }, RUN_TIMEOUT_MS);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describeRun(r.body));
  return r.body.status === 'ok' ? 0 : 1;
}

// ── install, remove, enable, disable ───────────────────────────────────────────────────────────

/** The install body: a URL as given, a path made absolute against the CLI's folder. */
export function installBody(source: string, allowUnsigned: boolean, cwd: string = process.cwd()): { url: string } | { path: string } {
  const base = /^https?:\/\//i.test(source) ? { url: source } : { path: resolve(cwd, source) };
  return { ...base, ...(allowUnsigned ? { allow_unsigned: true } : {}) };
}

export async function skillsInstall(conn: Connection, io: CliIo, args: { source: string; allowUnsigned: boolean; json: boolean }): Promise<number> {
  const r = await callBrain<SkillInstallResult>(conn, 'POST', '/api/skills/install', installBody(args.source, args.allowUnsigned), INSTALL_TIMEOUT_MS);
  if (r.status !== 201) return refused(io, r.status, r.body);
  const s = r.body;
  const how = s.signed_by ? `signed by ${s.signed_by}` : 'unsigned, recorded in the audit log';
  io.out.write(args.json ? json(s) : `${s.upgraded_from ? `upgraded ${s.skill.id} ${s.upgraded_from} → ${s.skill.version}` : `installed ${s.skill.id} ${s.skill.version}`} (${how}): ${s.skill.status}\n`);
  return 0;
}

export async function skillsChange(conn: Connection, io: CliIo, args: { id: string; action: 'remove' | 'enable' | 'disable'; json: boolean }): Promise<number> {
  const r =
    args.action === 'remove'
      ? await callBrain<{ id: string; removed: true }>(conn, 'DELETE', `/api/skills/${enc(args.id)}`)
      : await callBrain<SkillListItem>(conn, 'POST', `/api/skills/${enc(args.id)}/${args.action}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : args.action === 'remove' ? `removed ${args.id}\n` : `${args.id}: ${(r.body as SkillListItem).status}\n`);
  return 0;
}

// ── sign ───────────────────────────────────────────────────────────────────────────────────────

const KEY_ID = new RegExp(KEY_ID_PATTERN);

/** svc skills sign: exit 0 signed, 1 the folder or key file is refused, 2 bad invocation. */
export function skillsSign(io: CliIo, args: { dir: string; keyId: string | undefined; home: string; json: boolean }): number {
  if (args.keyId === undefined || !KEY_ID.test(args.keyId)) {
    io.err.write('svc skills sign: --key-id is required: 1-64 characters of A-Z a-z 0-9 . _ : - (starting with a letter or digit)\n');
    return 2;
  }
  try {
    const key = loadOrCreatePublisherKey(args.home);
    const signed = signSkillDir(resolve(args.dir), { keyId: args.keyId, privateKey: key.privateKey });
    const result = { path: signed.envelopePath, key_id: args.keyId, public_key: key.publicKey, files: signed.files };
    io.out.write(
      args.json
        ? json(result)
        : `signed: ${signed.envelopePath}\nfiles: ${Object.keys(signed.files).join(', ')}\nkey id: ${args.keyId}\npublic key: ${key.publicKey}\nbrains install it once they trust this key: svc publisher trust ${args.keyId} ${key.publicKey}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof ManifestFileError || err instanceof CanonicalJsonError || err instanceof PublisherKeyError) {
      io.err.write(`svc skills sign: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

// ── registration ───────────────────────────────────────────────────────────────────────────────

export function registerSkillsCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('skills', 'The brain\'s skills: list, show, run, install, remove, enable, disable, sign')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await skillsList(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('skills list', 'Installed and first-party skills: id, name, version, status (active, disabled, error)')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await skillsList(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('skills show <id>', 'A skill\'s manifest, status, source, signature and recent runs')
    .option('--json', 'Machine-readable output')
    .action(async (id: string, o: Opts) => ctx.exit(await skillsShow(ctx.conn(o), ctx, { id, json: o.json === true })));
  prog
    .command('skills run <id>', 'Run a skill now; exit 1 when it was stopped or a tool call waits for approval')
    .option('--params', 'The run\'s params as a JSON object')
    .option('--json', 'Machine-readable output')
    .action(async (id: string, o: Opts) => ctx.exit(await skillsRun(ctx.conn(o), ctx, { id, params: str(o.params), json: o.json === true })));
  prog
    .command('skills install <source>', 'Install or upgrade a skill from a folder or .tar.gz on this machine, or an https URL')
    .option('--allow-unsigned', 'Install without manifest.signed.json (recorded in the audit log as unsigned_install)')
    .option('--json', 'Machine-readable output')
    .action(async (source: string, o: Opts) => ctx.exit(await skillsInstall(ctx.conn(o), ctx, { source, allowUnsigned: o['allow-unsigned'] === true, json: o.json === true })));
  // Each written out: docs.test.ts finds commands by their literal names.
  const change = (action: 'remove' | 'enable' | 'disable') => async (id: string, o: Opts) => ctx.exit(await skillsChange(ctx.conn(o), ctx, { id, action, json: o.json === true }));
  prog.command('skills remove <id>', 'Uninstall a skill (first-party skills can only be disabled)').option('--json', 'Machine-readable output').action(change('remove'));
  prog.command('skills enable <id>', 'Turn a disabled skill back on').option('--json', 'Machine-readable output').action(change('enable'));
  prog.command('skills disable <id>', 'Turn a skill off: no tool, no triggers').option('--json', 'Machine-readable output').action(change('disable'));
  prog
    .command('skills sign <dir>', 'Add the file digests to a skill\'s manifest.json and write manifest.signed.json with the publisher key')
    .option('--key-id', 'The key id brains pin the publisher key under (required)')
    .option('--json', 'Machine-readable output')
    .action((dir: string, o: Opts) => ctx.exit(skillsSign(ctx, { dir, keyId: str(o['key-id']), home: ctx.conn(o).home, json: o.json === true })));
}
