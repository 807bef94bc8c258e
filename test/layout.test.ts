// The import directions of ARCHITECTURE.md ("Imports flow one way") and the composition-root rule of
// STYLE.md 1, enforced on the source tree with the TypeScript parser (comments and strings never
// count). A failure lists every violation as file:line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './helpers/external-tools';

const ROOT = repoRoot();
const SOURCE_DIRS = ['protocol', 'mesh', 'sync', 'daemon', 'node-agent', 'cli', 'web'] as const;
type Layer = (typeof SOURCE_DIRS)[number];

/** Which other top-level folders each layer may import (its own folder is always allowed). */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  protocol: [],
  mesh: ['protocol'],
  sync: ['protocol'],
  daemon: ['protocol', 'mesh', 'sync'],
  'node-agent': ['protocol', 'mesh', 'sync'],
  cli: ['protocol', 'mesh', 'sync'],
  web: ['protocol'],
};

/** The only imports of daemon/ from outside it (besides tests), each with its reason. */
const DAEMON_IMPORT_EXCEPTIONS: readonly { from: string; to: RegExp; why: string }[] = [
  { from: 'cli/main.ts', to: /^daemon\/main$/, why: 'svc serve runs the brain' },
  { from: 'cli/commands/doctor.ts', to: /^daemon\/(config|vault)\/[^/]+$|^daemon\/providers\/key-ring$/, why: 'local diagnostics read settings, the vault key, and provider key names as the key ring stores them' },
  { from: 'cli/commands/brain.ts', to: /^daemon\/store\/instance-lock$/, why: 'the pid file of a running brain' },
];

/** Composition roots: the only modules that may read process.env (STYLE.md 1). */
const ENV_READERS = new Set(['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts']);

interface Reference {
  file: string;
  line: number;
  specifier: string;
}

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(relative(ROOT, p).split(sep).join('/'));
    }
  };
  for (const d of SOURCE_DIRS) walk(join(ROOT, d));
  return out.sort();
}

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

const files = sourceFiles();
const parsed = new Map(files.map((f) => [f, parse(f)]));

void test('the source tree is where the layout test looks', () => {
  for (const must of ['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts', 'protocol/errors.ts']) assert.ok(files.includes(must), must);
});

void test('imports flow one way: protocol ← mesh, sync ← daemon, node-agent, cli; nothing imports daemon/ but tests', () => {
  const violations = files.flatMap((f) => imports(f, parsed.get(f)!)).map(importViolation).filter((v): v is string => v !== null);
  assert.deepEqual(violations, [], `import direction violations (ARCHITECTURE.md "Top-level layout"):\n  ${violations.join('\n  ')}`);
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
});
