// The import directions of ARCHITECTURE.md ("Imports flow one way"), the kernel seam of
// docs/architecture.md (the kernel imports no capability, capabilities reach each other only through
// the kernel's ports or protocol/, fastify stays behind http/, ws/ and app.ts), the composition-root
// rule of STYLE.md 1 and where tests live (STYLE.md 14: test/<source path>.test.ts), enforced on the
// tree with the TypeScript parser (comments and strings never count). A failure lists every violation
// as file:line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './helpers/external-tools';

const ROOT = repoRoot();
const SOURCE_DIRS = ['protocol', 'mesh', 'sync', 'signing', 'skills', 'daemon', 'node-agent', 'phone-bridge', 'cli', 'web'] as const;
type Layer = (typeof SOURCE_DIRS)[number];

/** Which other top-level folders each layer may import (its own folder is always allowed). */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  protocol: [],
  mesh: ['protocol'],
  // The sync core and the /sync session: the wire contract, and mesh/ for brain ids and pairing.
  sync: ['protocol', 'mesh'],
  // The skill sandbox: the wire contract (the manifest schema) only; the capability hands it its ports.
  skills: ['protocol'],
  // Signed manifests, publisher keys and detached signatures (docs/signing.md): pure, no brain.
  signing: ['protocol', 'mesh'],
  // The brain runs skills (skills/: the sandbox and its pool) through its skills capability.
  daemon: ['protocol', 'mesh', 'sync', 'signing', 'skills'],
  // The node-agent extracts the daemon bundles the brain delivers with the same careful archive reader
  // (signing/archive.ts) and runs their drivers in the skill sandbox (skills/, loaded on first use).
  'node-agent': ['protocol', 'mesh', 'sync', 'signing', 'skills'],
  // The reference phone-bridge client is bundled on its own for app developers: the wire contract and
  // the pairing helpers only.
  'phone-bridge': ['protocol', 'mesh'],
  cli: ['protocol', 'mesh', 'sync', 'signing', 'skills'],
  web: ['protocol'],
};

/** The only imports of daemon/ from outside it (besides tests), each with its reason. */
const DAEMON_IMPORT_EXCEPTIONS: readonly { from: string; to: RegExp; why: string }[] = [
  { from: 'cli/main.ts', to: /^daemon\/main$/, why: 'svc serve runs the brain' },
  { from: 'cli/commands/doctor.ts', to: /^daemon\/(config|vault)\/[^/]+$|^daemon\/providers\/key-ring$/, why: 'local diagnostics read settings, the vault key, and provider key names as the key ring stores them' },
  { from: 'cli/commands/brain.ts', to: /^daemon\/store\/instance-lock$/, why: 'the pid file of a running brain' },
  { from: 'cli/commands/registry.ts', to: /^daemon\/registry-server$/, why: 'svc registry serve runs the registry server (the brain\'s HTTP layer with only the registry routes)' },
  { from: 'cli/commands/checkpoints.ts', to: /^daemon\/files\/checkpoint[a-z-]*$/, why: 'svc checkpoints reads and reverts index.db itself, brain running or stopped, under the index lock (docs/files.md, Checkpoints)' },
];

/** The kernel's one import of daemon/ outside daemon/kernel/: the store port the capability context carries. */
const KERNEL_MAY_IMPORT: readonly string[] = ['daemon/store/store'];

/** The HTTP layer: the only files that may import fastify or @fastify/* (type-only imports count). */
const mayImportFastify = (file: string): boolean => file.startsWith('daemon/http/') || file.startsWith('daemon/ws/') || file === 'daemon/app.ts';
const isFastify = (specifier: string): boolean => specifier === 'fastify' || specifier.startsWith('fastify/') || specifier.startsWith('@fastify/');

/** What a leaf capability's folder may import besides itself, protocol/ and packages. */
const CAPABILITY_MAY_IMPORT: readonly RegExp[] = [/^daemon\/kernel\//, /^daemon\/http\/route-kit$/, /^daemon\/fs\//];

/** Imports the core had and must not grow back. */
const CORE_MUST_NOT: readonly { from: string; to: readonly string[] }[] = [
  { from: 'daemon/memory/', to: ['daemon/providers/', 'daemon/agent/'] },
  { from: 'daemon/identity/', to: ['daemon/agent/'] },
];

/** The documented exceptions to the seam rules above, each with its reason. */
const SEAM_EXCEPTIONS: readonly { from: string; to: string; why: string }[] = [
  {
    from: 'daemon/files/checkpoint-index.ts',
    to: 'daemon/store/hot-journal',
    why: 'index.db is a second SQLite file shared with the CLI; the holder of its lock plays back a journal left by a killed holder, as the store does for brain.db',
  },
  {
    from: 'daemon/files/checkpoint-lock.ts',
    to: 'daemon/store/instance-lock',
    why: 'the same liveness test (pid and process start time) as the brain\'s pid file decides when a lock holder is dead',
  },
  {
    from: 'daemon/memory/llm-summariser.ts',
    to: 'daemon/providers/provider',
    why: 'type only: the summariser streams a chat from the Provider contract (request and event union, which live with the providers); the composition root hands it the failover chain',
  },
];

/** Where tests must be: every source file of these folders has test/<its path>.test.ts. */
const MIRRORED_DIRS = ['daemon', 'cli', 'protocol', 'signing', 'skills'] as const;

/**
 * Source files without test/<path>.test.ts, each with the test that covers it. A test in test/e2e/
 * drives the built brain or CLI; any other must load the file (import it, or import what does). The
 * list may only shrink: move or write the mirrored test, delete the entry, and lower
 * COVERED_ELSEWHERE_MOST.
 */
const COVERED_ELSEWHERE: Readonly<Record<string, string>> = {
  'cli/commands/chat-session.ts': 'test/e2e/chat.test.ts',
  'cli/commands/chat.ts': 'test/e2e/chat.test.ts',
  'cli/commands/identity.ts': 'test/e2e/cli.test.ts',
  'cli/commands/memory.ts': 'test/e2e/memory.test.ts',
  'cli/commands/models.ts': 'test/e2e/providers.test.ts',
  'cli/commands/setup.ts': 'test/e2e/first-run.test.ts',
  'cli/main.ts': 'test/e2e/cli.test.ts',
  'cli/reexec.ts': 'test/e2e/cli.test.ts',
  'daemon/agent/activity-log.ts': 'test/daemon/agent/turn-runner.test.ts',
  'daemon/agent/agent-events.ts': 'test/daemon/agent/knowledge-extractor.test.ts',
  'daemon/agent/agent.ts': 'test/daemon/agent/turn-runner.test.ts',
  'daemon/agent/context-builder.ts': 'test/daemon/agent/turn-runner.test.ts',
  'daemon/agent/router/route-preferences.ts': 'test/daemon/agent/routing-correction.test.ts',
  'daemon/agent/router/specialists.ts': 'test/daemon/agent/router/router.test.ts',
  'daemon/agent/tools/brain-tools.ts': 'test/daemon/providers/local/local-provider.test.ts',
  'daemon/agent/tools/secret-matcher.ts': 'test/daemon/agent/tools/secret-scrubber.test.ts',
  'daemon/capabilities.ts': 'test/daemon/brain.test.ts',
  'daemon/config/unsupported-settings.ts': 'test/daemon/config/load-settings.test.ts',
  'daemon/http/health-routes.ts': 'test/daemon/app.test.ts',
  'daemon/http/metrics-routes.ts': 'test/e2e/metrics-endpoint.test.ts',
  'daemon/http/route-kit.ts': 'test/daemon/brain.test.ts',
  'daemon/identity/identity-capability.ts': 'test/daemon/brain.test.ts',
  'daemon/identity/identity-files.ts': 'test/daemon/identity/identity-routes.test.ts',
  'daemon/identity/identity-tool.ts': 'test/daemon/providers/local/local-provider.test.ts',
  'daemon/kernel/capability.ts': 'test/daemon/brain.test.ts',
  'daemon/kernel/conversation.ts': 'test/daemon/memory/episode-writer.test.ts',
  'daemon/kernel/errors.ts': 'test/daemon/app.test.ts',
  'daemon/kernel/events.ts': 'test/daemon/brain.test.ts',
  'daemon/kernel/metrics.ts': 'test/daemon/brain.test.ts',
  'daemon/kernel/ports.ts': 'test/daemon/memory/memory-tools.test.ts',
  'daemon/kernel/tool.ts': 'test/daemon/agent/turn-runner.test.ts',
  'daemon/lifecycle/lifecycle.ts': 'test/e2e/lifecycle.test.ts',
  'daemon/main.ts': 'test/e2e/lifecycle.test.ts',
  'daemon/memory/agent-memory.ts': 'test/daemon/identity/digital-twin.test.ts',
  'daemon/memory/backend-report.ts': 'test/daemon/memory/memory-search.hybrid.test.ts',
  'daemon/memory/create-memory.ts': 'test/daemon/memory/memory-search.test.ts',
  'daemon/memory/decay-report.ts': 'test/daemon/http/memory-admin-routes.test.ts',
  'daemon/memory/embedder.ts': 'test/daemon/memory/memory-search.hybrid.test.ts',
  'daemon/memory/embedding-indexer.ts': 'test/daemon/memory/memory-search.hybrid.test.ts',
  'daemon/memory/episode-repository.ts': 'test/daemon/memory/episode-writer.test.ts',
  'daemon/memory/ids.ts': 'test/daemon/memory/note-repository.test.ts',
  'daemon/memory/memory-events.ts': 'test/daemon/memory/memory-wiki.test.ts',
  'daemon/memory/memory-service.ts': 'test/daemon/http/memory-routes.test.ts',
  'daemon/memory/note-key.ts': 'test/daemon/memory/note-repository.test.ts',
  'daemon/memory/pagination.ts': 'test/daemon/http/memory-routes.test.ts',
  'daemon/memory/query-terms.ts': 'test/daemon/memory/lexical-match.test.ts',
  'daemon/memory/read-transaction.ts': 'test/daemon/memory/memory-search.test.ts',
  'daemon/memory/session-port.ts': 'test/daemon/http/memory-admin-routes.test.ts',
  'daemon/memory/session-snapshots.ts': 'test/daemon/http/memory-admin-routes.test.ts',
  'daemon/memory/term-stats.ts': 'test/daemon/memory/lexical-match.test.ts',
  'daemon/memory/tier-tables.ts': 'test/daemon/memory/lexical-match.test.ts',
  'daemon/providers/adapter-calls.ts': 'test/daemon/providers/openai-provider.test.ts',
  'daemon/providers/create-provider-chain.ts': 'test/daemon/providers/failover-chain.test.ts',
  'daemon/providers/key-ring.ts': 'test/daemon/providers/key-admin.test.ts',
  'daemon/providers/provider-registry.ts': 'test/daemon/providers/provider-state.test.ts',
  'daemon/providers/provider.ts': 'test/daemon/providers/failover-chain.test.ts',
  'daemon/providers/sdk-loader.ts': 'test/daemon/providers/openai-provider.test.ts',
  'daemon/providers/stall-guard.ts': 'test/daemon/providers/openai-provider.test.ts',
  'daemon/providers/tool-call-assembler.ts': 'test/daemon/providers/openai-provider.test.ts',
  'daemon/store/store.ts': 'test/daemon/store/sqlite-store.test.ts',
  'daemon/ws/frame-parser.ts': 'test/daemon/ws/session-routes.test.ts',
  'daemon/ws/session-connection.ts': 'test/daemon/ws/session-routes.test.ts',
  'protocol/dashboard.ts': 'test/daemon/http/dashboard-routes.test.ts',
  'protocol/errors.ts': 'test/daemon/app.test.ts',
  'protocol/health.ts': 'test/daemon/app.test.ts',
  'protocol/identity.ts': 'test/daemon/identity/identity-routes.test.ts',
  'protocol/memory.ts': 'test/daemon/http/memory-routes.test.ts',
  'protocol/providers.ts': 'test/daemon/http/provider-routes.test.ts',
  'protocol/session.ts': 'test/daemon/ws/session-routes.test.ts',
};
/** The ratchet on COVERED_ELSEWHERE: lower it when an entry goes, never raise it. */
const COVERED_ELSEWHERE_MOST = 70;

/** Composition roots: the only modules that may read process.env (STYLE.md 1). */
const ENV_READERS = new Set(['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts', 'phone-bridge/main.ts']);

interface Reference {
  file: string;
  line: number;
  specifier: string;
}

/** The TypeScript files (not declarations) under the given top-level folders, as repository paths. */
function typeScriptFiles(dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(relative(ROOT, p).split(sep).join('/'));
    }
  };
  for (const d of dirs) walk(join(ROOT, d));
  return out.sort();
}

const sourceFiles = (): string[] => typeScriptFiles(SOURCE_DIRS);

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

const lineOf = (sf: ts.SourceFile, node: ts.Node): number => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;

/** Static imports, re-exports, import() and require() with a string specifier. */
function imports(file: string, sf: ts.SourceFile): Reference[] {
  const refs: Reference[] = [];
  const visit = (node: ts.Node): void => {
    let spec: ts.Expression | undefined;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) spec = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) spec = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = node.argument.literal;
    if (spec && ts.isStringLiteralLike(spec)) refs.push({ file, line: lineOf(sf, node), specifier: spec.text });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** process.env, process['env'] and `const { env } = process`. */
function envReads(file: string, sf: ts.SourceFile): Reference[] {
  const refs: Reference[] = [];
  const isProcess = (e: ts.Expression): boolean => ts.isIdentifier(e) && e.text === 'process';
  const visit = (node: ts.Node): void => {
    const direct =
      (ts.isPropertyAccessExpression(node) && isProcess(node.expression) && node.name.text === 'env') ||
      (ts.isElementAccessExpression(node) && isProcess(node.expression) && ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === 'env');
    const destructured =
      ts.isVariableDeclaration(node) && node.initializer !== undefined && isProcess(node.initializer) && ts.isObjectBindingPattern(node.name) && node.name.elements.some((el) => (el.propertyName ?? el.name).getText(sf) === 'env');
    if (direct || destructured) refs.push({ file, line: lineOf(sf, node), specifier: 'process.env' });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** The repository path a relative specifier points at, without extension; null for packages and node: builtins. */
function target(ref: Reference): string | null {
  if (!ref.specifier.startsWith('.')) return null;
  return posix.normalize(posix.join(dirname(ref.file), ref.specifier)).replace(/\.(m|c)?(t|j)sx?$/, '');
}

const layerOf = (path: string): Layer | undefined => SOURCE_DIRS.find((d) => path === d || path.startsWith(`${d}/`));

function importViolation(ref: Reference): string | null {
  const to = target(ref);
  if (to === null) return null;
  const from = layerOf(ref.file)!;
  const into = to.startsWith('..') ? undefined : (to.split('/')[0] as string);
  if (into === from) return null;
  const where = `${ref.file}:${ref.line} imports ${to}`;
  if (into === undefined || !(SOURCE_DIRS as readonly string[]).includes(into)) return `${where}: outside the source tree (${SOURCE_DIRS.join(', ')})`;
  if (into === 'daemon') {
    if (DAEMON_IMPORT_EXCEPTIONS.some((e) => e.from === ref.file && e.to.test(to))) return null;
    return `${where}: nothing imports daemon/ but tests and the exceptions listed in test/layout.test.ts`;
  }
  if (!MAY_IMPORT[from].includes(into as Layer)) return `${where}: ${from}/ may import only ${MAY_IMPORT[from].join(', ') || 'nothing internal'}`;
  return null;
}

/**
 * The kernel seam (docs/architecture.md): what the kernel, leaf capabilities and the core may import.
 * `capabilities` are the folders of the definitions daemon/capabilities.ts lists (capabilityFolders).
 */
function seamViolations(ref: Reference, capabilities: readonly string[]): string[] {
  const to = target(ref);
  const where = `${ref.file}:${ref.line} imports ${to ?? ref.specifier}`;
  if (to === null) return isFastify(ref.specifier) && !mayImportFastify(ref.file) ? [`${where}: fastify is imported only by daemon/http/, daemon/ws/ and daemon/app.ts`] : [];
  if (SEAM_EXCEPTIONS.some((e) => e.from === ref.file && e.to === to)) return [];
  const out: string[] = [];
  if (ref.file.startsWith('daemon/kernel/') && to.startsWith('daemon/') && !to.startsWith('daemon/kernel/') && !KERNEL_MAY_IMPORT.includes(to)) {
    out.push(`${where}: the kernel imports no capability nor core part (only ${KERNEL_MAY_IMPORT.join(', ')}, protocol/ and packages)`);
  }
  const own = capabilities.find((c) => ref.file.startsWith(c));
  if (own !== undefined && to.startsWith('daemon/') && !to.startsWith(own) && !CAPABILITY_MAY_IMPORT.some((r) => r.test(to))) {
    out.push(`${where}: a capability (${own}) reaches the rest only through daemon/kernel/, protocol/, daemon/http/route-kit and daemon/fs/`);
  }
  for (const rule of CORE_MUST_NOT) {
    const into = rule.to.find((t) => to.startsWith(t));
    if (ref.file.startsWith(rule.from) && into !== undefined) out.push(`${where}: ${rule.from} must not import ${into}`);
  }
  return out;
}

/** The folders of the capabilities daemon/capabilities.ts lists: where its imports outside daemon/kernel/ live. */
function capabilityFolders(file: string, sf: ts.SourceFile): string[] {
  const folders = imports(file, sf)
    .map(target)
    .filter((t): t is string => t !== null && t.startsWith('daemon/') && !t.startsWith('daemon/kernel/'))
    .map((t) => `${posix.dirname(t)}/`);
  return [...new Set(folders)].sort();
}

/** test/<source path>.test.ts: where a source file's test lives. */
const mirroredTest = (source: string): string => `test/${source.replace(/\.(m|c)?tsx?$/, '')}.test.ts`;

/**
 * Source files of MIRRORED_DIRS without their mirrored test and not (or wrongly) in `coveredElsewhere`;
 * `tests` are the repository's *.test.ts, `loads(test, source)` says whether a test imports the source
 * directly or through other modules.
 */
function placementViolations(sources: readonly string[], tests: ReadonlySet<string>, coveredElsewhere: Readonly<Record<string, string>>, loads: (test: string, source: string) => boolean): string[] {
  const out: string[] = [];
  const mirrored = sources.filter((f) => MIRRORED_DIRS.some((d) => f.startsWith(`${d}/`)));
  for (const source of mirrored) {
    const own = mirroredTest(source);
    const covering = coveredElsewhere[source];
    if (covering === undefined) {
      if (!tests.has(own)) out.push(`${source}: no test at ${own} (move its test there, or name the test that covers it in COVERED_ELSEWHERE)`);
    } else if (tests.has(own)) out.push(`${source}: has ${own}; remove it from COVERED_ELSEWHERE`);
    else if (!tests.has(covering)) out.push(`${source}: COVERED_ELSEWHERE names ${covering}, which is not a test file`);
    else if (!covering.startsWith('test/e2e/') && !loads(covering, source)) out.push(`${source}: ${covering} (COVERED_ELSEWHERE) does not load it`);
  }
  for (const source of Object.keys(coveredElsewhere)) if (!mirrored.includes(source)) out.push(`${source}: in COVERED_ELSEWHERE but not a source file of ${MIRRORED_DIRS.join(', ')} (remove the entry, lower COVERED_ELSEWHERE_MOST)`);
  return out;
}

/**
 * Tests under test/<MIRRORED_DIRS>/ whose source is gone: test/<dir>/<name>.test.ts and a second test
 * of the same file, test/<dir>/<name>.<aspect>.test.ts, mirror <dir>/<name>.* (any extension: the rules
 * of alerts.yml are tested too). `filesIn(dir)` lists a folder's file names (none when it does not exist).
 */
function orphanTests(tests: readonly string[], filesIn: (dir: string) => readonly string[]): string[] {
  return tests
    .filter((t) => MIRRORED_DIRS.some((d) => t.startsWith(`test/${d}/`)))
    .filter((t) => {
      const dir = posix.dirname(t).slice('test/'.length);
      const name = basename(t).split('.')[0]!;
      return !filesIn(dir).some((f) => f.startsWith(`${name}.`));
    })
    .map((t) => `${t}: no source ${posix.dirname(t).slice('test/'.length)}/${basename(t).split('.')[0]!}.* (tests mirror their source: test/<path>.test.ts, or test/<path>.<aspect>.test.ts for a second one)`);
}

/** Whether `from` reaches `to` through relative imports (a repository path with extension). */
function makeLoads(parseFile: (file: string) => ts.SourceFile): (from: string, to: string) => boolean {
  const resolve = (ref: Reference): string | undefined => {
    const t = target(ref);
    return t === null ? undefined : [`${t}.ts`, `${t}.tsx`, `${t}/index.ts`].find((c) => existsSync(join(ROOT, c)));
  };
  const deps = new Map<string, string[]>();
  const depsOf = (file: string): string[] => {
    let d = deps.get(file);
    if (d === undefined) {
      d = imports(file, parseFile(file)).map(resolve).filter((r): r is string => r !== undefined);
      deps.set(file, d);
    }
    return d;
  };
  return (from, to) => {
    const seen = new Set<string>([from]);
    const queue = [from];
    while (queue.length > 0) {
      for (const d of depsOf(queue.pop()!)) {
        if (d === to) return true;
        if (!seen.has(d)) {
          seen.add(d);
          queue.push(d);
        }
      }
    }
    return false;
  };
}

const files = sourceFiles();
const parsed = new Map(files.map((f) => [f, parse(f)]));

void test('the source tree is where the layout test looks', () => {
  for (const must of ['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts', 'phone-bridge/main.ts', 'protocol/errors.ts']) assert.ok(files.includes(must), must);
});

void test('imports flow one way: protocol ← mesh, sync ← daemon, node-agent, cli; protocol, mesh ← phone-bridge; nothing imports daemon/ but tests', () => {
  const violations = files.flatMap((f) => imports(f, parsed.get(f)!)).map(importViolation).filter((v): v is string => v !== null);
  assert.deepEqual(violations, [], `import direction violations (ARCHITECTURE.md "Top-level layout"):\n  ${violations.join('\n  ')}`);
});

void test('the kernel seam: the kernel imports no capability, capabilities meet through kernel ports, fastify stays behind http/, ws/ and app.ts', () => {
  const capabilities = capabilityFolders('daemon/capabilities.ts', parsed.get('daemon/capabilities.ts')!);
  assert.ok(capabilities.includes('daemon/identity/'), `capability folders read from daemon/capabilities.ts: ${capabilities.join(', ')}`);
  const violations = files.flatMap((f) => imports(f, parsed.get(f)!)).flatMap((r) => seamViolations(r, capabilities));
  assert.deepEqual(violations, [], `kernel seam violations (docs/architecture.md):\n  ${violations.join('\n  ')}`);
});

void test('each source file has its test where the tree says (STYLE.md 14), and no test outlives its source', () => {
  const testTree = typeScriptFiles(['test']);
  const tests = new Set(testTree.filter((f) => f.endsWith('.test.ts')));
  const loads = makeLoads((f) => parsed.get(f) ?? parse(f));
  const violations = [
    ...placementViolations(files, tests, COVERED_ELSEWHERE, loads),
    ...orphanTests([...tests], (dir) => (existsSync(join(ROOT, dir)) ? readdirSync(join(ROOT, dir)) : [])),
  ];
  assert.deepEqual(violations, [], `tests not where the tree says (docs/development.md, "Tests"):\n  ${violations.join('\n  ')}`);
  assert.ok(Object.keys(COVERED_ELSEWHERE).length <= COVERED_ELSEWHERE_MOST, `COVERED_ELSEWHERE may only shrink (at most ${COVERED_ELSEWHERE_MOST} entries)`);
});

void test('only the composition roots read process.env (STYLE.md 1)', () => {
  const violations = files
    .filter((f) => !ENV_READERS.has(f))
    .flatMap((f) => envReads(f, parsed.get(f)!))
    .map((r) => `${r.file}:${r.line} reads process.env; take the value as an argument from ${[...ENV_READERS].join(', ')}`);
  assert.deepEqual(violations, [], `process.env outside the composition roots:\n  ${violations.join('\n  ')}`);
});

void test('the checks see what they should (fixtures)', () => {
  const fixture = (file: string, text: string): ts.SourceFile => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const sf = fixture('mesh/x.ts', "import a from '../daemon/app';\nexport * from '../sync/hlc';\nconst b = await import('./local');\n// process.env in a comment\nconst s = 'process.env';\nconst { env } = process;\nprocess['env'];\ntype T = import('../cli/usage').X;\n");
  assert.deepEqual(
    imports('mesh/x.ts', sf).map((r) => [r.line, importViolation(r) !== null]),
    [[1, true], [2, true], [3, false], [8, true]],
  );
  assert.deepEqual(envReads('mesh/x.ts', sf).map((r) => r.line), [6, 7]);
  assert.equal(importViolation({ file: 'cli/commands/doctor.ts', line: 1, specifier: '../../daemon/vault/vault' }), null);
  assert.notEqual(importViolation({ file: 'cli/commands/doctor.ts', line: 1, specifier: '../../daemon/store/sqlite-store' }), null);
  assert.notEqual(importViolation({ file: 'protocol/a.ts', line: 1, specifier: '../mesh/b' }), null);
  assert.equal(importViolation({ file: 'daemon/a.ts', line: 1, specifier: '../sync/hlc.js' }), null);
  assert.equal(importViolation({ file: 'sync/a.ts', line: 1, specifier: '../mesh/brain-id' }), null);
  assert.notEqual(importViolation({ file: 'sync/a.ts', line: 1, specifier: '../daemon/memory/knowledge-graph' }), null);
  assert.notEqual(importViolation({ file: 'mesh/a.ts', line: 1, specifier: '../sync/hlc' }), null);
});

void test('the seam checks see what they should (fixtures)', () => {
  const fixture = (file: string, text: string): ts.SourceFile => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const caps = capabilityFolders('daemon/capabilities.ts', fixture('daemon/capabilities.ts', "import type { CapabilityDefinition } from './kernel/capability';\nimport { identityCapability } from './identity/identity-capability';\nimport { greeter } from './greeter/greeter';\n"));
  assert.deepEqual(caps, ['daemon/greeter/', 'daemon/identity/']);
  const bad = (file: string, specifier: string): boolean => seamViolations({ file, line: 1, specifier }, caps).length > 0;
  // The kernel: the store port, protocol/ and packages only.
  assert.equal(bad('daemon/kernel/x.ts', '../store/store'), false);
  assert.equal(bad('daemon/kernel/x.ts', '../../protocol/session'), false);
  assert.equal(bad('daemon/kernel/x.ts', './tool'), false);
  assert.equal(bad('daemon/kernel/x.ts', 'pino'), false);
  assert.equal(bad('daemon/kernel/x.ts', '../store/sqlite-store'), true);
  assert.equal(bad('daemon/kernel/x.ts', '../agent/agent'), true);
  assert.equal(bad('daemon/kernel/x.ts', '../identity/identity-files'), true);
  // fastify: http/, ws/ and app.ts only, type-only imports and import() types included.
  const brain = fixture('daemon/brain.ts', "import type { FastifyInstance } from 'fastify';\ntype P = import('@fastify/websocket').WebsocketHandler;\nimport ws from '@fastify/websocket';\n");
  assert.deepEqual(imports('daemon/brain.ts', brain).flatMap((r) => seamViolations(r, caps)).length, 3);
  for (const ok of ['daemon/http/x.ts', 'daemon/ws/x.ts', 'daemon/app.ts']) assert.equal(bad(ok, 'fastify'), false, ok);
  assert.equal(bad('cli/x.ts', 'fastify'), true);
  assert.equal(bad('daemon/memory/x.ts', '@fastify/type-provider-typebox'), true);
  assert.equal(bad('daemon/memory/x.ts', 'fastify-plugin-of-someone-else'), false);
  // A leaf capability: its folder, the kernel, protocol/, route-kit, fs/ and packages.
  for (const ok of ['./y', '../kernel/ports', '../http/route-kit', '../fs/atomic-write', '../../protocol/identity', 'node:fs', '@sinclair/typebox']) assert.equal(bad('daemon/greeter/x.ts', ok), false, ok);
  for (const no of ['../agent/agent', '../memory/memory-service', '../providers/provider', '../identity/identity-files', '../http/auth', '../store/sqlite-store']) assert.equal(bad('daemon/greeter/x.ts', no), true, no);
  // The core's old breaks, and the documented exception.
  assert.equal(bad('daemon/memory/x.ts', '../providers/provider'), true);
  assert.equal(bad('daemon/memory/x.ts', '../agent/agent-events'), true);
  assert.equal(bad('daemon/memory/llm-summariser.ts', '../providers/provider'), false);
  assert.equal(bad('daemon/memory/llm-summariser.ts', '../providers/failover-chain'), true);
  assert.equal(bad('daemon/memory/x.ts', '../kernel/ports'), false);
});

void test('the placement checks see what they should (fixtures)', () => {
  const sources = ['daemon/a/b.ts', 'daemon/a/c.ts', 'daemon/a/d.ts', 'daemon/a/e.ts', 'daemon/a/f.ts', 'daemon/a/g.ts', 'mesh/m.ts'];
  const tests = new Set(['test/daemon/a/b.test.ts', 'test/daemon/a/c.test.ts', 'test/e2e/x.test.ts', 'test/daemon/a/other.test.ts', 'test/daemon/a/loader.test.ts']);
  const covered = { 'daemon/a/c.ts': 'test/e2e/x.test.ts', 'daemon/a/d.ts': 'test/daemon/a/missing.test.ts', 'daemon/a/f.ts': 'test/daemon/a/other.test.ts', 'daemon/a/g.ts': 'test/daemon/a/loader.test.ts', 'daemon/gone.ts': 'test/e2e/x.test.ts' };
  const loads = (test: string, source: string): boolean => test === 'test/daemon/a/loader.test.ts' && source === 'daemon/a/g.ts';
  assert.deepEqual(
    placementViolations(sources, tests, covered, loads).map((v) => v.split(':')[0]),
    ['daemon/a/c.ts', 'daemon/a/d.ts', 'daemon/a/e.ts', 'daemon/a/f.ts', 'daemon/gone.ts'],
  );
  assert.deepEqual(placementViolations(['daemon/a/h.ts'], new Set(['test/e2e/x.test.ts']), { 'daemon/a/h.ts': 'test/e2e/x.test.ts' }, () => false), [], 'an e2e test runs the build');
  const filesIn = (dir: string): readonly string[] => ({ 'daemon/a': ['b.ts', 'alerts.yml', 'alerts.test.yml'] })[dir] ?? [];
  assert.deepEqual(
    orphanTests(['test/daemon/a/b.test.ts', 'test/daemon/a/b.property.test.ts', 'test/daemon/a/alerts.test.ts', 'test/daemon/a/x.test.ts', 'test/daemon/z/b.test.ts', 'test/daemon/a/bx.test.ts', 'test/e2e/anything.test.ts'], filesIn).map((v) => v.split(':')[0]),
    ['test/daemon/a/x.test.ts', 'test/daemon/z/b.test.ts', 'test/daemon/a/bx.test.ts'],
  );
  const loadsReal = makeLoads(parse);
  assert.equal(loadsReal('test/daemon/app.test.ts', 'daemon/http/error-handler.ts'), true, 'through daemon/app.ts');
  assert.equal(loadsReal('test/daemon/kernel/text.test.ts', 'daemon/agent/agent.ts'), false);
});
