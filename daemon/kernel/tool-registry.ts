// The tools the agent may call, each registered under the capability that owns it. Tools come and go
// at run time (a hardware node's devices, an installed skill, an MCP server): `removeOwner` takes all
// of an owner's tools at once, and listeners hear of every change (metrics declare the tool's label,
// a session can re-offer the list). Each tool's argument schema is compiled once, so checking a
// model's arguments costs microseconds per call (the turn-overhead budget, bench/sections/agent.mjs);
// it is compiled on the tool's first call, not at registration: most tools are never called in a given
// run, and compiling all of them at start cost start-up time and idle memory. Tools that come from
// outside (a skill's params, an MCP server's inputSchema) bring plain JSON Schema rather than TypeBox:
// those are checked by Ajv, which the HTTP layer loads anyway.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Kind, type TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import type { ToolSpec } from './conversation';
import type { Tool } from './tool';

interface Entry {
  owner: string;
  tool: Tool;
  /** The compiled argument check, made on first use: the problems of a value, empty when valid. */
  check?: (args: unknown) => string[];
}

const MAX_PROBLEMS = 5;
let ajv: Ajv | undefined;

/**
 * A check for a TypeBox schema (compiled by TypeBox) or a plain JSON Schema, bare or wrapped in
 * Type.Unsafe (compiled by Ajv: TypeBox's compiler does not check an Unsafe schema's content).
 */
function compileCheck(schema: TSchema): (args: unknown) => string[] {
  if (Kind in schema && schema[Kind] !== 'Unsafe') {
    const check = TypeCompiler.Compile(schema);
    return (args) => (check.Check(args) ? [] : [...check.Errors(args)].slice(0, MAX_PROBLEMS).map((e) => `${e.path || '/'}: ${e.message}`));
  }
  ajv ??= new Ajv({ allErrors: true, strict: false, validateSchema: false });
  let validate: ReturnType<Ajv['compile']>;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    // A schema that does not compile (a broken MCP server's) refuses every call instead of failing the turn.
    const message = `the tool's parameter schema is not valid JSON Schema: ${(err as Error).message}`;
    return () => [message];
  }
  return (args) => (validate(args) ? [] : (validate.errors ?? []).slice(0, MAX_PROBLEMS).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`));
}

export type ToolChange = { kind: 'added' | 'removed'; owner: string; name: string };

const NAME = /^[a-z][a-z0-9_]{0,63}$/;

export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: ((change: ToolChange) => void)[] = [];

  register(owner: string, tool: Tool): this {
    const name = tool.spec.name;
    if (!NAME.test(name)) throw new Error(`tool name ${JSON.stringify(name)}: expected lower_snake_case, at most 64 characters`);
    const existing = this.entries.get(name);
    if (existing) throw new Error(`tool ${name} is already registered by ${existing.owner}`);
    this.entries.set(name, { owner, tool });
    this.changed({ kind: 'added', owner, name });
    return this;
  }

  /** Removes one tool; false when it was not registered. */
  unregister(name: string): boolean {
    const entry = this.entries.get(name);
    if (!entry) return false;
    this.entries.delete(name);
    this.changed({ kind: 'removed', owner: entry.owner, name });
    return true;
  }

  /** Removes every tool of `owner`; returns their names. */
  removeOwner(owner: string): string[] {
    const names = [...this.entries].filter(([, e]) => e.owner === owner).map(([name]) => name);
    for (const name of names) this.unregister(name);
    return names;
  }

  /** Hears every registration and removal (after the change). */
  onChange(listener: (change: ToolChange) => void): void {
    this.listeners.push(listener);
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  ownerOf(name: string): string | undefined {
    return this.entries.get(name)?.owner;
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Specs to offer the model: those `only` names (a specialist's subset; unknown names are skipped, a
   * name ending in `*` is a prefix: `hwdev_*` is every generated device tool) and every tool offered
   * everywhere; all when `only` is absent.
   */
  specs(only?: readonly string[]): ToolSpec[] {
    if (!only) return [...this.entries.values()].map((e) => e.tool.spec);
    const chosen = new Set<string>();
    for (const name of only) {
      if (!name.endsWith('*')) {
        if (this.entries.has(name)) chosen.add(name);
        continue;
      }
      const prefix = name.slice(0, -1);
      for (const key of this.entries.keys()) if (key.startsWith(prefix)) chosen.add(key);
    }
    for (const [name, entry] of this.entries) if (entry.tool.everywhere) chosen.add(name);
    return [...chosen].map((name) => this.entries.get(name)!.tool.spec);
  }

  /** Validation problems of a call's arguments, as "path: message" lines; empty when valid. */
  problems(name: string, args: unknown): string[] {
    const entry = this.entries.get(name);
    if (!entry) return [`unknown tool ${name}`];
    const check = (entry.check ??= compileCheck(entry.tool.spec.parameters));
    return check(args);
  }

  private changed(change: ToolChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
