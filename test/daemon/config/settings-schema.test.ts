// Every key of the settings schema is read by the program, and every environment variable is used
// (issue 9 item 20: a setting that is accepted but does nothing is refused, never kept). Found with the
// TypeScript checker on the real sources, not by grepping names: a read is a property access (or a
// destructuring) whose symbol is declared by the schema, and a section handed whole to a part typed
// with an interface of its own (AgentSettings, DecayParams) carries its keys over to that interface's
// properties, whose reads count too. Logging or copying a section does not count as reading its keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import ts from 'typescript';
import { SettingsSchema } from '../../../daemon/config/settings-schema';
import { ENVIRONMENT_VARIABLES } from '../../../daemon/config/environment';
import { UNSUPPORTED_VARIABLES } from '../../../daemon/config/unsupported-settings';
import { NODE_AGENT_ENVIRONMENT } from '../../../node-agent/command-line';
import { repoRoot } from '../../helpers/external-tools';

const ROOT = repoRoot();
const ROOTS = ['daemon/main.ts', 'cli/main.ts', 'node-agent/main.ts'];
/** Keys that are accepted on purpose without being read: `$schema` lets an editor find a schema. */
/** Keys that do their work before the typed settings exist: $schema is for editors; version is read from the raw file by the settings migrations (load-settings.ts). */
const NOT_READ_ON_PURPOSE = new Set(['$schema', 'version']);

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  default?: unknown;
}

/** Every key a settings.json can hold, as docs/configuration.md names it (`a.b`, `list[].key`). */
function schemaKeys(schema: JsonSchema, prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, sub]) => {
    const path = `${prefix}${key}`;
    if (sub.type === 'object' && sub.properties) return schemaKeys(sub, `${path}.`);
    return [path, ...(sub.type === 'array' && sub.items?.type === 'object' ? schemaKeys(sub.items, `${path}[].`) : [])];
  });
}

function createProgram(): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')) });
  assert.ok(config, 'tsconfig.json parses');
  return ts.createProgram({ rootNames: ROOTS.map((f) => join(ROOT, f)), options: config.options });
}

/** What the program does with settings: the schema's declarations by path, and the symbols it reads. */
class SettingsUse {
  readonly paths = new Map<ts.Declaration, string>();
  private readonly reads: ts.Symbol[] = [];
  private readonly handOvers: { from: ts.Type; to: ts.Type }[] = [];

  constructor(
    private readonly checker: ts.TypeChecker,
    settingsType: ts.Type,
  ) {
    this.label(settingsType, '');
  }

  /** The schema's own declarations: `Settings['server']['host']` → server.host. */
  private label(type: ts.Type, prefix: string, depth = 0): void {
    for (const prop of this.props(type)) {
      const path = `${prefix}${prop.name}`;
      for (const d of prop.declarations ?? []) this.paths.set(d, path);
      if (depth < 6) this.label(this.checker.getTypeOfSymbol(prop), this.isArray(this.checker.getTypeOfSymbol(prop)) ? `${path}[].` : `${path}.`, depth + 1);
    }
  }

  private isArray(type: ts.Type): boolean {
    return this.checker.isArrayType(this.checker.getNonNullableType(type));
  }

  /** Properties of an object type, or of the element type of an array. */
  private props(type: ts.Type): ts.Symbol[] {
    const t = this.checker.getNonNullableType(type);
    if (this.checker.isArrayType(t)) {
      const element = this.checker.getTypeArguments(t as ts.TypeReference)[0];
      return element ? this.props(element) : [];
    }
    if (!(t.flags & ts.TypeFlags.Object) || t.getCallSignatures().length > 0) return [];
    return t.getProperties();
  }

  scan(file: ts.SourceFile): void {
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && !isAssignmentTarget(node)) this.read(this.checker.getSymbolAtLocation(node.name));
      if (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression)) this.read(this.checker.getTypeAtLocation(node.expression).getProperty(node.argumentExpression.text));
      if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const name = node.propertyName ?? node.name;
        if (ts.isIdentifier(name)) this.read(this.checker.getTypeAtLocation(node.parent).getProperty(name.text));
      }
      if (ts.isExpression(node) && isWholeValue(node)) {
        const to = this.checker.getContextualType(node);
        if (to) this.handOvers.push({ from: this.checker.getTypeAtLocation(node), to });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }

  private read(symbol: ts.Symbol | undefined): void {
    if (symbol) this.reads.push(symbol);
  }

  /** A section handed to a differently typed parameter or property: its keys become that type's properties. */
  private carryOver(from: ts.Type, to: ts.Type, depth: number): boolean {
    let grew = false;
    for (const p of this.props(from)) {
      const path = (p.declarations ?? []).map((d) => this.paths.get(d)).find((x) => x !== undefined);
      const q = this.props(to).find((x) => x.name === p.name);
      if (path === undefined || !q || q === p) continue;
      for (const d of q.declarations ?? []) {
        if (this.paths.has(d)) continue;
        this.paths.set(d, path);
        grew = true;
      }
      if (depth < 6 && this.carryOver(this.checker.getTypeOfSymbol(p), this.checker.getTypeOfSymbol(q), depth + 1)) grew = true;
    }
    return grew;
  }

  /** Paths read anywhere, after following hand-overs until nothing new is learned. */
  readPaths(): Set<string> {
    for (let round = 0; round < 10; round++) if (!this.handOvers.map((h) => this.carryOver(h.from, h.to, 0)).some(Boolean)) break;
    const out = new Set<string>();
    for (const s of this.reads) for (const d of s.declarations ?? []) if (this.paths.has(d)) out.add(this.paths.get(d)!);
    return out;
  }
}

const isAssignmentTarget = (node: ts.Node): boolean =>
  ts.isBinaryExpression(node.parent) && node.parent.left === node && node.parent.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.parent.operatorToken.kind <= ts.SyntaxKind.LastAssignment;

/** An identifier or property access used as a value of its own, not as the object of a further access. */
const isWholeValue = (node: ts.Expression): boolean =>
  (ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) &&
  !(ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node) &&
  !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node) &&
  (ts.isCallOrNewExpression(node.parent) || ts.isPropertyAssignment(node.parent) || ts.isVariableDeclaration(node.parent) || ts.isReturnStatement(node.parent) || ts.isSpreadAssignment(node.parent));

const program = createProgram();
const checker = program.getTypeChecker();
const ours = (f: ts.SourceFile): boolean => !f.isDeclarationFile && f.fileName.startsWith(ROOT) && !f.fileName.includes(`${sep}node_modules${sep}`);
/** daemon/config only validates and overlays settings; what it touches is not a use. */
const users = program.getSourceFiles().filter((f) => ours(f) && !f.fileName.includes('/daemon/config/'));

function settingsUse(): SettingsUse {
  const schemaFile = program.getSourceFile(join(ROOT, 'daemon/config/settings-schema.ts'));
  assert.ok(schemaFile, 'the program includes the settings schema');
  const alias = checker.getSymbolAtLocation(schemaFile)?.exports?.get(ts.escapeLeadingUnderscores('Settings'));
  assert.ok(alias, 'settings-schema.ts exports the Settings type');
  const use = new SettingsUse(checker, checker.getDeclaredTypeOfSymbol(alias));
  for (const f of users) use.scan(f);
  return use;
}

test('every key of the settings schema is read by the brain or the svc client', () => {
  const use = settingsUse();
  const keys = schemaKeys(SettingsSchema);
  const labelled = new Set(use.paths.values());
  assert.deepEqual(keys.filter((k) => !labelled.has(k)), [], 'the checker sees every schema key');
  const read = use.readPaths();
  assert.ok(read.size > 40, `the scan found the reads (${read.size})`);
  const unread = keys.filter((k) => !read.has(k) && !NOT_READ_ON_PURPOSE.has(k));
  assert.deepEqual(unread, [], `settings accepted but read nowhere — implement them or refuse them (daemon/config/unsupported-settings.ts): ${unread.join(', ')}`);
});

test('every environment variable is read by the program, and every SVC_ variable it reads is listed', () => {
  const readNames = new Set<string>();
  for (const f of program.getSourceFiles().filter(ours)) {
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && /^(SVC_|CREDENTIALS_DIRECTORY$|NOTIFY_SOCKET$|WATCHDOG_USEC$)/.test(node.name.text) && !isAssignmentTarget(node)) readNames.add(node.name.text);
      ts.forEachChild(node, visit);
    };
    visit(f);
  }
  const unused = Object.keys(ENVIRONMENT_VARIABLES).filter((n) => !readNames.has(n));
  assert.deepEqual(unused, [], `variables listed but read nowhere: ${unused.join(', ')}`);
  // The node-agent is a program of its own with its own list (node-agent/command-line.ts, docs/node-agent.md).
  const unlisted = [...readNames].filter((n) => !(n in ENVIRONMENT_VARIABLES) && !(n in UNSUPPORTED_VARIABLES) && !(n in NODE_AGENT_ENVIRONMENT));
  assert.deepEqual(unlisted, [], `variables read but not listed (nor documented): ${unlisted.join(', ')}`);
  const agentDocs = readFileSync(join(ROOT, 'docs/node-agent.md'), 'utf8');
  for (const name of Object.keys(NODE_AGENT_ENVIRONMENT)) assert.ok(readNames.has(name) && agentDocs.includes(name), `${name}: read by node-agent/main.ts and in docs/node-agent.md`);
});
