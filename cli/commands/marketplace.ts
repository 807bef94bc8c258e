// svc marketplace (spec 4.14, issue 16; docs/registry.md): what a registry offers, and its reviews.
//   svc marketplace [search <text>] [--kind skill|daemon]   published items (all, or those matching)
//   svc marketplace show <name>                             one item: versions, digest, publisher key
//   svc marketplace review                                  submissions waiting for review (reviewers)
//   svc marketplace review <id> --approve | --reject [--reason <text>]
//   svc marketplace withdraw <name> <version>               the publisher takes a version back
// Every form takes --registry <url> and --json. Reviews need the reviewer's token (cli/commands/registry.ts).
import type { Sade } from 'sade';
import type { Connection } from '../connection';
import type { ItemDetail, ItemList, Submission, SubmissionList, VersionView } from '../../protocol/registry';
import { loadOrCreatePublisherKey } from '../../signing/publisher-key';
import { signMessage } from '../../signing/ed25519';
import { str, type CliIo, type CommandContext } from './key';
import { callRegistry, registryCommand, resolveRegistry } from './registry';

type Opts = Record<string, unknown>;

export const MARKETPLACE_USAGE = `usage: svc marketplace [search <text>] [--kind skill|daemon] [--registry <url>] [--json]
       svc marketplace show <name> [--json]
       svc marketplace review [--json]
       svc marketplace review <id> --approve | --reject [--reason <text>] [--json]
       svc marketplace withdraw <name> <version> [--json]
`;

/** The context line a withdrawal signs (daemon/registry/registry-service.ts WITHDRAW_CONTEXT; docs/registry.md). */
const WITHDRAW_CONTEXT = 'svc-registry-withdraw-v1';

interface Common {
  readonly registry: string | undefined;
  readonly json: boolean;
}

export async function marketplaceSearch(io: CliIo, brain: Connection, args: Common & { text: string | undefined; kind: string | undefined }): Promise<number> {
  if (args.kind !== undefined && args.kind !== 'skill' && args.kind !== 'daemon') {
    io.err.write(`svc marketplace: --kind is skill or daemon, not ${args.kind}\n${MARKETPLACE_USAGE}`);
    return 2;
  }
  return registryCommand(io, 'marketplace', async () => {
    const query = new URLSearchParams({ ...(args.text ? { q: args.text } : {}), ...(args.kind ? { kind: args.kind } : {}) }).toString();
    const { items } = await callRegistry<ItemList>(resolveRegistry(args.registry, io.env, brain), 'GET', `/items${query ? `?${query}` : ''}`);
    if (args.json) io.out.write(`${JSON.stringify({ items })}\n`);
    else if (items.length === 0) io.out.write(args.text ? `nothing published matches ${JSON.stringify(args.text)}\n` : 'nothing is published yet\n');
    else for (const i of items) io.out.write(`${i.name}  ${i.version}  ${i.kind}  ${i.display_name}${i.description ? ` — ${i.description}` : ''}\n`);
    return 0;
  });
}

export async function marketplaceShow(io: CliIo, brain: Connection, args: Common & { name: string }): Promise<number> {
  return registryCommand(io, 'marketplace', async () => {
    const item = await callRegistry<ItemDetail>(resolveRegistry(args.registry, io.env, brain), 'GET', `/items/${encodeURIComponent(args.name)}`);
    io.out.write(args.json ? `${JSON.stringify(item)}\n` : describeItem(item));
    return 0;
  });
}

function describeItem(item: ItemDetail): string {
  const lines = [`${item.name} (${item.kind}) — ${item.display_name}`, `id: ${item.id}`];
  if (item.description) lines.push(item.description);
  lines.push(`publisher key: ${item.key_id ?? 'none bound yet'}`);
  if (item.current === null) lines.push('not installable until reviewed: no version is published');
  for (const v of item.versions) lines.push(versionLine(v));
  return `${lines.join('\n')}\n`;
}

const versionLine = (v: VersionView): string => `  ${v.version}  ${v.state}  sha256 ${v.sha256}  ${v.size} bytes${v.reason ? `  (${v.reason})` : ''}`;

export async function marketplaceReview(io: CliIo, brain: Connection, args: Common & { id: string | undefined; approve: boolean; reject: boolean; reason: string | undefined }): Promise<number> {
  const decision = args.approve && !args.reject ? 'approve' : args.reject && !args.approve ? 'reject' : undefined;
  if (args.id === undefined && (args.approve || args.reject)) return usage(io, 'review: --approve and --reject need the id of a submission');
  if (args.id !== undefined && decision === undefined) return usage(io, `review ${args.id}: exactly one of --approve and --reject`);
  if (args.reason !== undefined && decision !== 'reject') return usage(io, 'review: --reason goes with --reject');
  const registry = resolveRegistry(args.registry, io.env, brain);
  return registryCommand(io, 'marketplace', async () => {
    if (args.id === undefined || decision === undefined) {
      const { submissions } = await callRegistry<SubmissionList>(registry, 'GET', '/review');
      if (args.json) io.out.write(`${JSON.stringify({ submissions })}\n`);
      else if (submissions.length === 0) io.out.write('no submissions are waiting for review\n');
      else for (const s of submissions) io.out.write(submissionLine(s));
      return 0;
    }
    const reviewed = await callRegistry<Submission>(registry, 'POST', `/review/${encodeURIComponent(args.id)}`, { decision, ...(args.reason ? { reason: args.reason } : {}) });
    io.out.write(args.json ? `${JSON.stringify(reviewed)}\n` : `${reviewed.name} ${reviewed.version}: ${reviewed.state} (${reviewed.visibility})${reviewed.reason ? ` — ${reviewed.reason}` : ''}\n`);
    return 0;
  });
}

const submissionLine = (s: Submission): string =>
  `${s.submission_id}  ${s.kind} ${s.name} ${s.version}  key ${s.key_id}${s.bound_key_id !== null && s.bound_key_id !== s.key_id ? ` (the name is bound to ${s.bound_key_id})` : ''}  submitted ${s.submitted_at}\n`;

export async function marketplaceWithdraw(io: CliIo, brain: Connection, args: Common & { name: string; version: string }): Promise<number> {
  return registryCommand(io, 'marketplace', async () => {
    const registry = resolveRegistry(args.registry, io.env, brain);
    const item = await callRegistry<ItemDetail>(registry, 'GET', `/items/${encodeURIComponent(args.name)}`);
    const key = loadOrCreatePublisherKey(brain.home);
    const signature = signMessage(key.privateKey, `${WITHDRAW_CONTEXT}\n${item.id}\n${args.version}`);
    const v = await callRegistry<VersionView>(registry, 'POST', `/items/${item.id}/withdraw`, { version: args.version, key_id: key.keyId, signature });
    io.out.write(args.json ? `${JSON.stringify(v)}\n` : `${item.name} ${v.version}: ${v.state}\n`);
    return 0;
  });
}

function usage(io: CliIo, message: string): number {
  io.err.write(`svc marketplace ${message}\n${MARKETPLACE_USAGE}`);
  return 2;
}

export function registerMarketplaceCommands(prog: Sade, ctx: CommandContext): void {
  const common = (o: Opts): Common => ({ registry: str(o.registry), json: o.json === true });
  const options = (command: Sade): Sade => command.option('--registry', 'Registry URL (default $SVC_REGISTRY_URL, else the local brain)').option('--json', 'Machine-readable output');
  options(prog.command('marketplace', 'Published skills and daemons of a registry: search, show, review, withdraw').option('--kind', 'Only skills or only daemons')).action(async (o: Opts) =>
    ctx.exit(await marketplaceSearch(ctx, ctx.conn(o), { ...common(o), text: undefined, kind: str(o.kind) })),
  );
  options(prog.command('marketplace search <text>', 'Published items whose name, display name or description contains the text').option('--kind', 'Only skills or only daemons')).action(
    async (text: string, o: Opts) => ctx.exit(await marketplaceSearch(ctx, ctx.conn(o), { ...common(o), text, kind: str(o.kind) })),
  );
  options(prog.command('marketplace show <name>', 'One item by name or UUID: its published versions, digests and publisher key')).action(async (name: string, o: Opts) =>
    ctx.exit(await marketplaceShow(ctx, ctx.conn(o), { ...common(o), name })),
  );
  options(
    prog
      .command('marketplace review [id]', 'Reviewers: without an id, the submissions waiting; with one, approve or reject it')
      .option('--approve', 'Publish it: listed, downloadable and installable')
      .option('--reject', 'Refuse it (it stays private)')
      .option('--reason', 'Why it is rejected (shown to the publisher)'),
  ).action(async (id: string | undefined, o: Opts) =>
    ctx.exit(await marketplaceReview(ctx, ctx.conn(o), { ...common(o), id, approve: o.approve === true, reject: o.reject === true, reason: str(o.reason) })),
  );
  options(prog.command('marketplace withdraw <name> <version>', 'Take back a version you published (signed with your publisher key)')).action(async (name: string, version: string, o: Opts) =>
    ctx.exit(await marketplaceWithdraw(ctx, ctx.conn(o), { ...common(o), name, version })),
  );
}
