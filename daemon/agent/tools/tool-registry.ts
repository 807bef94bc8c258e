// The registry of tools the agent may call. Each tool's argument schema is compiled once, so checking
// a model's arguments costs microseconds per call (the turn-overhead budget, bench/sections/agent.mjs).
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import type { ToolSpec } from '../../providers/provider';
import type { Tool } from './tool';

interface Entry {
  tool: Tool;
  check: TypeCheck<TSchema>;
}

const NAME = /^[a-z][a-z0-9_]{0,63}$/;

export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();

  register(tool: Tool): this {
    const name = tool.spec.name;
    if (!NAME.test(name)) throw new Error(`tool name ${JSON.stringify(name)}: expected lower_snake_case, at most 64 characters`);
    if (this.entries.has(name)) throw new Error(`tool ${name} is already registered`);
    this.entries.set(name, { tool, check: TypeCompiler.Compile(tool.spec.parameters) });
    return this;
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Specs to offer the model; `only` restricts to a specialist's subset (unknown names are skipped). */
  specs(only?: readonly string[]): ToolSpec[] {
    const names = only ?? this.names();
    const out: ToolSpec[] = [];
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry) out.push(entry.tool.spec);
    }
    return out;
  }

  /** Validation problems of a call's arguments, as "path: message" lines; empty when valid. */
  problems(name: string, args: unknown): string[] {
    const entry = this.entries.get(name);
    if (!entry) return [`unknown tool ${name}`];
    if (entry.check.Check(args)) return [];
    const out: string[] = [];
    for (const e of entry.check.Errors(args)) {
      out.push(`${e.path || '/'}: ${e.message}`);
      if (out.length >= 5) break;
    }
    return out;
  }
}
