// svc models list|test|pin (spec 4.14 "per-provider chat model list/test/pin"): ask one provider of
// the chain for its models, send it a tiny prompt and report the latency, or pin the model its turns use.
import type { Sade } from 'sade';
import type { ModelTestResponse, ModelsResponse, PinResponse, ProvidersResponse } from '../../protocol/providers';
import { callBrain, type Connection } from '../connection';
import { reportError, str, table, type CliIo, type CommandContext } from './key';

const enc = encodeURIComponent;

export async function modelsList(conn: Connection, io: CliIo, args: { provider?: string | undefined; json: boolean }): Promise<number> {
  if (args.provider === undefined) return chainOverview(conn, io, args.json);
  const r = await callBrain<ModelsResponse>(conn, 'GET', `/api/providers/${enc(args.provider)}/models`, undefined, 60_000);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) {
    io.out.write(`${JSON.stringify(r.body)}\n`);
    return 0;
  }
  for (const m of r.body.models) io.out.write(`${m === r.body.effective ? '*' : ' '} ${m}${m === r.body.pinned ? ' (pinned)' : ''}\n`);
  io.out.write(`${r.body.provider} uses ${r.body.effective}${r.body.pinned ? ' (pinned)' : ''}\n`);
  return 0;
}

/** Without a provider: the chain in failover order, each with its model and state. */
async function chainOverview(conn: Connection, io: CliIo, json: boolean): Promise<number> {
  const r = await callBrain<ProvidersResponse>(conn, 'GET', '/api/providers');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (json) {
    io.out.write(`${JSON.stringify(r.body.providers)}\n`);
    return 0;
  }
  const rows = r.body.providers.map((p) => [String(p.position + 1), p.id, p.kind, `${p.model}${p.pinned_model ? ' (pinned)' : ''}`, p.state, p.keyless ? '-' : String(p.keys.length)]);
  io.out.write(table([['#', 'PROVIDER', 'KIND', 'MODEL', 'STATE', 'KEYS'], ...rows]));
  return 0;
}

export async function modelsTest(conn: Connection, io: CliIo, args: { provider: string; model?: string | undefined; json: boolean }): Promise<number> {
  const r = await callBrain<ModelTestResponse>(conn, 'POST', `/api/providers/${enc(args.provider)}/models/test`, args.model ? { model: args.model } : {}, 120_000);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  const t = r.body;
  if (args.json) io.out.write(`${JSON.stringify(t)}\n`);
  else if (t.ok) io.out.write(`${t.provider} ${t.model}: ok in ${Math.round(t.latency_ms)} ms (first token ${t.first_token_ms === null ? '-' : Math.round(t.first_token_ms)} ms${t.key ? `, key ${t.key}` : ''}): ${JSON.stringify(t.text)}\n`);
  else io.out.write(`${t.provider} ${t.model}: failed after ${Math.round(t.latency_ms)} ms: ${t.error_class ?? 'error'}: ${t.message ?? ''}\n`);
  return t.ok ? 0 : 1;
}

export async function modelsPin(conn: Connection, io: CliIo, args: { provider: string; model?: string | undefined; clear: boolean }): Promise<number> {
  const path = `/api/providers/${enc(args.provider)}/model-pin`;
  const r = args.clear ? await callBrain<PinResponse>(conn, 'DELETE', path) : await callBrain<PinResponse>(conn, 'PUT', path, { model: args.model });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(r.body.pinned ? `${r.body.provider} pinned to ${r.body.pinned}\n` : `${r.body.provider} unpinned; uses ${r.body.effective}\n`);
  return 0;
}

type Opts = Record<string, unknown>;

const MODELS_USAGE = `svc models list [provider] [--json]
svc models test <provider> [--model M] [--json]
svc models pin <provider> <model> | --clear
Details: svc models <subcommand> --help
`;

export function registerModelCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('models', 'Per-provider chat models: list, test, pin').action(() => {
    ctx.out.write(MODELS_USAGE);
    ctx.exit(2);
  });
  prog
    .command('models list [provider]', 'Models of one provider (* = used), or the whole chain in failover order')
    .option('--json', 'Machine-readable output')
    .action(async (provider: string | undefined, o: Opts) => ctx.exit(await modelsList(ctx.conn(o), ctx, { provider, json: o.json === true })));
  prog
    .command('models test <provider>', 'Send a tiny prompt to one provider and report latency')
    .option('--model', 'Model to test (default: the one the provider uses)')
    .option('--json', 'Machine-readable output')
    .action(async (provider: string, o: Opts) => ctx.exit(await modelsTest(ctx.conn(o), ctx, { provider, model: str(o.model), json: o.json === true })));
  prog
    .command('models pin <provider> [model]', 'Pin the model a provider uses (kept in the brain across restarts); --clear unpins')
    .option('--clear', 'Remove the pin')
    .action(async (provider: string, model: string | undefined, o: Opts) => {
      if (!model && o.clear !== true) ctx.usageError('svc models pin <provider> <model>, or --clear');
      ctx.exit(await modelsPin(ctx.conn(o), ctx, { provider, model, clear: o.clear === true }));
    });
}
