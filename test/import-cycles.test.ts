// No file-level import cycles in the source tree (ARCHITECTURE.md: a kernel that imports no capability,
// imports that flow one way). A cycle makes module evaluation order matter and hides which of two files
// is the lower layer. Imports are read with the TypeScript parser, relative specifiers resolved to
// files; type-only imports count too (they are the same dependency, only erased at build time).
// A failure lists every cycle as file → file → … → file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import fc from 'fast-check';
import ts from 'typescript';
import { repoRoot } from './helpers/external-tools';

const ROOT = repoRoot();
const SOURCE_DIRS = ['protocol', 'daemon', 'cli', 'node-agent'] as const;
const SOURCE_FILE = /\.(ts|tsx|mts|cts)$/;

type Graph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (SOURCE_FILE.test(e.name) && !e.name.endsWith('.d.ts')) out.push(relative(ROOT, p).split(sep).join('/'));
    }
  };
  for (const d of SOURCE_DIRS) walk(join(ROOT, d));
  return out.sort();
}

/** Specifiers of static imports and re-exports (type-only included), import(), require() and import('x').T types. */
function specifiers(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    let spec: ts.Expression | undefined;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) spec = node.moduleSpecifier;
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) spec = node.moduleReference.expression;
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) spec = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = node.argument.literal;
    if (spec && ts.isStringLiteralLike(spec)) out.push(spec.text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The source file a relative specifier names (`./a`, `./a.js`, `./a.ts`, `./dir` → dir/index.ts); null for packages and non-source files. */
function resolve(from: string, specifier: string, exists: (path: string) => boolean): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const stem = base.replace(/\.(m|c)?(j|t)sx?$/, '');
  const candidates = [base, ...['.ts', '.tsx', '.mts', '.cts'].map((ext) => stem + ext), ...['index.ts', 'index.tsx'].map((i) => posix.join(base, i))];
  return candidates.find((c) => SOURCE_FILE.test(c) && exists(c)) ?? null;
}

/**
 * Every cycle of the graph, one per strongly connected component (Tarjan): a shortest path from the
 * component's first file back to itself. A file importing itself is a cycle of one.
 */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strongConnect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    const selfLoop = component.length === 1 && (graph.get(v) ?? []).includes(v);
    if (component.length > 1 || selfLoop) components.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strongConnect(v);
  return components.map((c) => shortestLoop(graph, c)).sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Breadth-first from the component's first file back to it, inside the component. */
function shortestLoop(graph: Graph, component: readonly string[]): string[] {
  const inside = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = previous.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  throw new Error(`${start} is in a strongly connected component but has no way back to itself`);
}

function sourceGraph(): Map<string, string[]> {
  const files = sourceFiles();
  const known = new Set(files);
  return new Map(files.map((f) => [f, [...new Set(specifiers(f, readFileSync(join(ROOT, f), 'utf8')).map((s) => resolve(f, s, (p) => known.has(p))).filter((p): p is string => p !== null))]]));
}

void test(`no file-level import cycles in ${SOURCE_DIRS.join('/, ')}/ (type-only imports included)`, () => {
  const graph = sourceGraph();
  for (const must of ['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts', 'protocol/errors.ts']) assert.ok(graph.has(must), `the test looks where the source is: ${must}`);
  assert.ok([...graph.values()].some((deps) => deps.length > 0), 'imports are resolved to files');
  const found = cycles(graph).map((c) => c.join(' → '));
  assert.deepEqual(found, [], `import cycles (break each by moving the shared piece to the lower file):\n  ${found.join('\n  ')}`);
});

void test('the parser sees every kind of import, type-only ones included, and nothing in comments or strings', () => {
  const text = [
    "import type { A } from './a';",
    "import { type B } from './b.js';",
    "export * from './c';",
    "export type { D } from './d';",
    'type E = import("./e").E;',
    "const f = await import('./f');",
    "const g = require('./g');",
    "import h = require('./h');",
    "import 'node:fs';",
    "// import x from './comment';",
    "const s = \"import y from './string'\";",
  ].join('\n');
  assert.deepEqual(specifiers('daemon/x.ts', text), ['./a', './b.js', './c', './d', './e', './f', './g', './h', 'node:fs']);
});

void test('relative specifiers resolve to source files; packages, JSON and missing files do not', () => {
  const files = new Set(['daemon/agent/a.ts', 'daemon/kernel/index.ts', 'protocol/p.ts']);
  const has = (p: string): boolean => files.has(p);
  assert.equal(resolve('daemon/agent/b.ts', './a', has), 'daemon/agent/a.ts');
  assert.equal(resolve('daemon/agent/b.ts', './a.js', has), 'daemon/agent/a.ts');
  assert.equal(resolve('daemon/memory/m.ts', '../agent/a.ts', has), 'daemon/agent/a.ts');
  assert.equal(resolve('daemon/agent/b.ts', '../kernel', has), 'daemon/kernel/index.ts');
  assert.equal(resolve('daemon/agent/b.ts', '../../protocol/p', has), 'protocol/p.ts');
  assert.equal(resolve('daemon/agent/b.ts', './sentences.json', has), null);
  assert.equal(resolve('daemon/agent/b.ts', 'openai', has), null);
  assert.equal(resolve('daemon/agent/b.ts', './missing', has), null);
});

void test('cycles: the two of the issue, a self-import and a longer one are each listed once; a diamond is none', () => {
  const graph = new Map<string, string[]>([
    ['agent/turn-runner.ts', ['agent/routing-correction.ts', 'agent/session.ts']],
    ['agent/routing-correction.ts', ['agent/turn-runner.ts']],
    ['providers/openai-provider.ts', ['providers/adapter-calls.ts']],
    ['providers/adapter-calls.ts', ['providers/openai-provider.ts', 'providers/stall-guard.ts']],
    ['self.ts', ['self.ts']],
    ['x.ts', ['y.ts']],
    ['y.ts', ['z.ts']],
    ['z.ts', ['x.ts']],
    ['top.ts', ['left.ts', 'right.ts']],
    ['left.ts', ['bottom.ts']],
    ['right.ts', ['bottom.ts']],
  ]);
  assert.deepEqual(cycles(graph), [
    ['agent/routing-correction.ts', 'agent/turn-runner.ts', 'agent/routing-correction.ts'],
    ['providers/adapter-calls.ts', 'providers/openai-provider.ts', 'providers/adapter-calls.ts'],
    ['self.ts', 'self.ts'],
    ['x.ts', 'y.ts', 'z.ts', 'x.ts'],
  ]);
});

void test('cycles: a graph has one exactly when it cannot be ordered leaves-first; every listed loop is made of real edges (fast-check)', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const edges = fc.array(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...names)), { maxLength: 14 });
  fc.assert(
    fc.property(edges, (list) => {
      const graph = new Map<string, string[]>(names.map((n) => [n, []]));
      for (const [from, to] of list) graph.get(from)!.push(to);
      const found = cycles(graph);
      for (const loop of found) {
        assert.equal(loop[0], loop.at(-1), 'a loop ends where it starts');
        for (let i = 0; i + 1 < loop.length; i++) assert.ok(graph.get(loop[i]!)!.includes(loop[i + 1]!), `${loop[i]} → ${loop[i + 1]} is an edge`);
      }
      assert.equal(found.length === 0, topologicallyOrderable(graph));
    }),
  );
});

/** Kahn's algorithm: repeatedly remove files nothing left imports; an acyclic graph empties. */
function topologicallyOrderable(graph: Graph): boolean {
  const indegree = new Map([...graph.keys()].map((k) => [k, 0]));
  for (const deps of graph.values()) for (const d of deps) indegree.set(d, (indegree.get(d) ?? 0) + 1);
  const ready = [...indegree].filter(([, n]) => n === 0).map(([k]) => k);
  let removed = 0;
  while (ready.length > 0) {
    const v = ready.pop()!;
    removed++;
    for (const d of graph.get(v) ?? []) {
      indegree.set(d, indegree.get(d)! - 1);
      if (indegree.get(d) === 0) ready.push(d);
    }
  }
  return removed === indegree.size;
}
