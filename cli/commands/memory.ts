// svc memory …: search, note, episodes, knowledge, wiki, backend, decay, snapshots (spec 4.14
// "memory backend/decay/query"; docs/memory.md). Every subcommand prints for people, or the API's
// JSON with --json. Exit 0 on success, 1 when the brain refuses (its message on stderr; with --json
// the error envelope on stdout), 2 on bad usage.
import { clip } from '../../protocol/clip';
import { BrainRefusedError, callBrain, type Connection } from '../connection';
import type {
  BackendReport, DecayReport, EpisodePage, KnowledgeResult, Note, SearchResponse, SessionRef, Snapshot, WikiList, WikiPage, WikiRebuild,
} from '../../protocol/memory';

type Out = NodeJS.WritableStream;
const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
};

/** Calls the brain; prints either the JSON, the human rendering, or the error. */
async function call<T>(conn: Connection, out: Out, json: boolean, method: string, path: string, body: unknown, render: (t: T) => string): Promise<number> {
  const res = await callBrain<T>(conn, method, path, body);
  if (res.status >= 400) {
    if (!json) throw BrainRefusedError.of(conn, 'memory', res.status, res.body); // one line on stderr, exit 1 (cli/main.ts)
    out.write(`${JSON.stringify(res.body)}\n`);
    return 1;
  }
  out.write(json ? `${JSON.stringify(res.body)}\n` : render(res.body));
  return 0;
}

const day = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

export const memorySearch = (conn: Connection, q: string, o: { limit?: number | undefined; json: boolean }, out: Out): Promise<number> =>
  call<SearchResponse>(conn, out, o.json, 'GET', `/api/memory/search${qs({ q, limit: o.limit })}`, undefined, (r) => {
    const head = r.degraded ? `(lexical only: embeddings ${r.degraded.reason})\n` : '';
    if (r.results.length === 0) return `${head}nothing in memory matches "${q}"\n`;
    return head + r.results.map((x) => `${x.relevance.toFixed(2)}  ${x.tier.padEnd(9)} ${day(x.timestamp)}  ${clip(x.summary, 100)}\n    ${x.id}\n`).join('');
  });

export const memoryNote = (conn: Connection, text: string, o: { tags?: string[] | undefined; json: boolean }, out: Out): Promise<number> =>
  call<Note>(conn, out, o.json, 'POST', '/api/memory/note', { text, ...(o.tags?.length ? { tags: o.tags } : {}) }, (n) => `remembered ${n.id}${n.tags.length ? ` [${n.tags.join(', ')}]` : ''}\n`);

export const memoryEpisodes = (conn: Connection, o: { limit?: number | undefined; cursor?: string | undefined; json: boolean }, out: Out): Promise<number> =>
  call<EpisodePage>(conn, out, o.json, 'GET', `/api/memory/episodes${qs({ limit: o.limit, cursor: o.cursor })}`, undefined, (p) =>
    (p.items.length === 0 ? 'no episodes yet\n' : p.items.map((e) => `${day(e.created_at)}  ${e.id}  (${e.reason}, ${e.message_count} messages)\n    ${clip(e.summary, 160)}\n`).join('')) +
    (p.next_cursor ? `more: svc memory episodes --cursor ${p.next_cursor}\n` : ''),
  );

export const memoryKnowledge = (conn: Connection, o: { subject?: string | undefined; predicate?: string | undefined; object?: string | undefined; depth?: number | undefined; json: boolean }, out: Out): Promise<number> =>
  call<KnowledgeResult>(conn, out, o.json, 'GET', `/api/memory/knowledge${qs({ subject: o.subject, predicate: o.predicate, object: o.object, depth: o.depth })}`, undefined, (r) =>
    r.triples.length === 0
      ? 'no matching facts\n'
      : r.triples.map((x) => `${'  '.repeat(x.hop)}${x.subject} — ${x.predicate} → ${x.object}  (${x.confidence.toFixed(2)}, ${x.sources.length} source${x.sources.length === 1 ? '' : 's'})\n`).join('') + (r.truncated ? '(truncated)\n' : ''),
  );

export function memoryWiki(conn: Connection, o: { slug?: string | undefined; rebuild: boolean; json: boolean }, out: Out): Promise<number> {
  if (o.rebuild) return call<WikiRebuild>(conn, out, o.json, 'POST', '/api/memory/wiki/rebuild', undefined, (r) => `compiled ${r.pages} pages, removed ${r.removed} (${r.ms} ms)\n`);
  if (o.slug) {
    return call<WikiPage>(conn, out, o.json, 'GET', `/api/memory/wiki/${encodeURIComponent(o.slug)}`, undefined, (p) =>
      `# ${p.title} (${p.kind})\n\n${p.body.map((s) => `- ${s.text}  [${s.sources.join(', ')}]\n`).join('')}`,
    );
  }
  return call<WikiList>(conn, out, o.json, 'GET', '/api/memory/wiki', undefined, (l) =>
    l.items.length === 0 ? 'no wiki pages yet: a page appears for each subject with two or more facts and each note tag\n' : l.items.map((p) => `${p.slug.padEnd(32)} ${p.kind.padEnd(7)} ${String(p.statements).padStart(4)} statements${p.stale ? '  (stale)' : ''}\n`).join(''),
  );
}

export const memoryBackend = (conn: Connection, o: { probe: boolean; json: boolean }, out: Out): Promise<number> =>
  call<BackendReport>(conn, out, o.json, 'GET', `/api/memory/backend${qs({ probe: o.probe || undefined })}`, undefined, (b) => {
    const e = b.embeddings;
    const emb = e.configured ? `${e.model} at ${e.base_url} (${e.indexed} vectors${e.dim ? `, dim ${e.dim}` : ''}${e.index_ready ? '' : ', index loading'})` : 'not configured (lexical search only)';
    const probe = e.probe ? `\n  probe:      ${e.probe.ok ? `ok in ${e.probe.ms} ms` : `FAILED (${e.probe.reason}) after ${e.probe.ms} ms`}` : '';
    return `store:        ${b.store.engine}, tokenizer ${b.store.tokenizer}\n  path:       ${b.store.path}\nitems:        ${b.counts.notes} notes, ${b.counts.episodes} episodes, ${b.counts.triples} facts, ${b.counts.wiki_pages} wiki pages, ${b.counts.snapshots} snapshots\nembeddings:   ${emb}${probe}\nsearch:       floor ${b.search.relevance_floor}, recency ${b.search.recency_weight}, embedding timeout ${b.search.query_timeout_ms} ms\n`;
  });

/** --set half_life_days=60,weight=0.2 (enabled=true|false) */
export function parseDecaySet(spec: string): Record<string, number | boolean> | string {
  const out: Record<string, number | boolean> = {};
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [k, v] = part.split('=');
    if (!k || v === undefined) return `expected key=value, got "${part}"`;
    if (k === 'enabled') {
      if (v !== 'true' && v !== 'false') return 'enabled must be true or false';
      out[k] = v === 'true';
    } else if (['half_life_days', 'rehearsal_factor', 'weight'].includes(k) && v.trim() !== '' && Number.isFinite(Number(v))) out[k] = Number(v);
    else return `unknown or non-numeric decay parameter "${part}" (half_life_days, rehearsal_factor, weight, enabled)`;
  }
  return Object.keys(out).length ? out : 'nothing to set';
}

export const memoryDecay = (conn: Connection, o: { set?: Record<string, number | boolean> | undefined; json: boolean }, out: Out): Promise<number> =>
  call<DecayReport>(conn, out, o.json, o.set ? 'PATCH' : 'GET', '/api/memory/decay', o.set, (d) => {
    const p = d.params;
    const curve = [0, 1, 3].map((n) => `  ${n} recall${n === 1 ? ' ' : 's'}: ${d.curve.filter((c) => c.recalls === n).map((c) => `${c.days}d ${c.relevance_factor.toFixed(2)}`).join('  ')}\n`).join('');
    const dist = d.retention.buckets.filter((b) => b.items > 0).map((b) => `  retention ${b.from.toFixed(1)}-${b.to.toFixed(1)}: ${b.items}\n`).join('');
    return `decay ${p.enabled ? 'on' : 'off'}: half-life ${p.half_life_days} days, x${p.rehearsal_factor} per recall, up to ${Math.round(p.weight * 100)}% of relevance (nothing is deleted)\nrelevance factor after N days without recall:\n${curve}${d.retention.items} items, ${d.retention.never_recalled} never recalled\n${dist}`;
  });

export const memorySnapshot = (conn: Connection, sessionId: string, o: { label?: string | undefined; json: boolean }, out: Out): Promise<number> =>
  call<Snapshot>(conn, out, o.json, 'POST', '/api/memory/snapshots', { session_id: sessionId, ...(o.label ? { label: o.label } : {}) }, (s) => `snapshot ${s.id} of ${s.session_id}: ${s.message_count} messages, ${s.working_count} working-memory items\n`);

export const memorySnapshots = (conn: Connection, o: { session?: string | undefined; json: boolean }, out: Out): Promise<number> =>
  call<{ items: Snapshot[] }>(conn, out, o.json, 'GET', `/api/memory/snapshots${qs({ session_id: o.session })}`, undefined, (l) =>
    l.items.length === 0 ? 'no snapshots\n' : l.items.map((s) => `${day(s.created_at)}  ${s.id}  session ${s.session_id}  ${s.message_count} msgs${s.label ? `  "${s.label}"` : ''}\n`).join(''),
  );

export const memoryBranch = (conn: Connection, snapshotId: string, o: { json: boolean }, out: Out): Promise<number> =>
  call<SessionRef>(conn, out, o.json, 'POST', `/api/memory/snapshots/${encodeURIComponent(snapshotId)}/branch`, undefined, (r) => `new session ${r.session_id} branched from ${r.snapshot_id}\n`);

export const memoryRestore = (conn: Connection, snapshotId: string, o: { session?: string | undefined; json: boolean }, out: Out): Promise<number> =>
  call<SessionRef>(conn, out, o.json, 'POST', `/api/memory/snapshots/${encodeURIComponent(snapshotId)}/restore`, o.session ? { session_id: o.session } : {}, (r) => `session ${r.session_id} restored to ${r.snapshot_id}\n`);

interface Sade {
  command(usage: string, desc?: string): Sade;
  option(flag: string, desc?: string): Sade;
  action(handler: (...args: never[]) => unknown): Sade;
}
interface MemoryCliContext {
  conn: (o: Record<string, unknown>) => Connection;
  exit: (code: number) => void;
  usageError: (message: string) => never;
  /** A text argument; `-` reads it from stdin. */
  textArg: (value: string) => Promise<string>;
  out: Out;
}
type Opts = Record<string, unknown> & { json?: boolean };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

export const MEMORY_USAGE = `svc memory <search|note|episodes|knowledge|wiki|backend|decay|snapshot|snapshots|branch|restore> [--json]
  search <query> [--limit N]            hybrid search across notes, episodes and facts (- reads stdin)
  note <text> [--tags a,b]              remember a note (the rest of the line; - reads stdin)
  episodes [--limit N] [--cursor C]     episode summaries, newest first
  knowledge [--subject S] [--predicate P] [--object O] [--depth 0-3]
  wiki [slug] [--rebuild]               compiled pages with provenance
  backend [--probe]                     storage, embeddings and ranking settings
  decay [--set half_life_days=60,rehearsal_factor=2,weight=0.3,enabled=true]
  snapshot <session_id> [--label L]     snapshot a session; snapshots [--session S]; branch <snapshot_id>; restore <snapshot_id> [--session S]
`;

export function registerMemoryCommands(prog: Sade, ctx: MemoryCliContext): void {
  const intOf = (o: Opts, flag: string): number | undefined => {
    const v = o[flag];
    if (v === undefined) return undefined;
    const n = typeof v === 'number' || typeof v === 'string' ? Number(v) : NaN;
    if (!Number.isInteger(n)) ctx.usageError(`--${flag} ${JSON.stringify(v)}: expected an integer`);
    return n;
  };
  const run = (p: Promise<number>): Promise<void> => p.then(ctx.exit);
  prog.command('memory', 'Memory: search, note, episodes, knowledge, wiki, backend, decay, snapshots').action(() => {
    ctx.out.write(MEMORY_USAGE);
    ctx.exit(2);
  });
  prog
    .command('memory search <query>', 'Search memory (all tiers); says so when nothing matches')
    .option('--limit', 'Results, 1-50 (default 10)')
    .option('--json', 'Machine-readable output')
    .action(async (q: string, o: Opts) => run(memorySearch(ctx.conn(o), await ctx.textArg(q), { limit: intOf(o, 'limit'), json: o.json === true }, ctx.out)));
  prog
    .command('memory note <text>', 'Remember a note')
    .option('--tags', 'Comma-separated tags')
    .option('--json', 'Machine-readable output')
    .action(async (text: string, o: Opts) => run(memoryNote(ctx.conn(o), await ctx.textArg(text), { tags: str(o.tags)?.split(',').map((t) => t.trim()).filter(Boolean), json: o.json === true }, ctx.out)));
  prog
    .command('memory episodes', 'Conversation summaries, newest first')
    .option('--limit', 'Page size, 1-200 (default 50)')
    .option('--cursor', 'Continue from a previous page')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => run(memoryEpisodes(ctx.conn(o), { limit: intOf(o, 'limit'), cursor: str(o.cursor), json: o.json === true }, ctx.out)));
  prog
    .command('memory knowledge', 'Query the knowledge graph')
    .option('--subject', 'Subject (case-insensitive)')
    .option('--predicate', 'Predicate')
    .option('--object', 'Object')
    .option('--depth', 'Hops to follow, 0-3 (default 1)')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => run(memoryKnowledge(ctx.conn(o), { subject: str(o.subject), predicate: str(o.predicate), object: str(o.object), depth: intOf(o, 'depth'), json: o.json === true }, ctx.out)));
  prog
    .command('memory wiki [slug]', 'List wiki pages, read one, or --rebuild them all')
    .option('--rebuild', 'Recompile every page')
    .option('--json', 'Machine-readable output')
    .action((slug: string | undefined, o: Opts) => run(memoryWiki(ctx.conn(o), { slug: str(slug), rebuild: o.rebuild === true, json: o.json === true }, ctx.out)));
  prog
    .command('memory backend', 'Storage engine, item counts, embedding provider and ranking settings')
    .option('--probe', 'Call the embedding provider once and report')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => run(memoryBackend(ctx.conn(o), { probe: o.probe === true, json: o.json === true }, ctx.out)));
  prog
    .command('memory decay', 'Show the forgetting curve and tune it (--set key=value,...)')
    .option('--set', 'half_life_days=N,rehearsal_factor=N,weight=0..1,enabled=true|false')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => {
      const spec = str(o.set);
      const set = spec === undefined ? undefined : parseDecaySet(spec);
      if (typeof set === 'string') ctx.usageError(`--set: ${set}`);
      return run(memoryDecay(ctx.conn(o), { set, json: o.json === true }, ctx.out));
    });
  prog
    .command('memory snapshot <session_id>', 'Snapshot a session (conversation + working memory)')
    .option('--label', 'A name for the snapshot')
    .option('--json', 'Machine-readable output')
    .action((id: string, o: Opts) => run(memorySnapshot(ctx.conn(o), String(id), { label: str(o.label), json: o.json === true }, ctx.out)));
  prog
    .command('memory snapshots', 'List snapshots')
    .option('--session', 'Only this session')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => run(memorySnapshots(ctx.conn(o), { session: str(o.session), json: o.json === true }, ctx.out)));
  prog
    .command('memory branch <snapshot_id>', 'Start a new session from a snapshot')
    .option('--json', 'Machine-readable output')
    .action((id: string, o: Opts) => run(memoryBranch(ctx.conn(o), String(id), { json: o.json === true }, ctx.out)));
  prog
    .command('memory restore <snapshot_id>', 'Put a session back to a snapshot')
    .option('--session', 'Session to restore (default: the one it was taken from)')
    .option('--json', 'Machine-readable output')
    .action((id: string, o: Opts) => run(memoryRestore(ctx.conn(o), String(id), { session: str(o.session), json: o.json === true }, ctx.out)));
}
