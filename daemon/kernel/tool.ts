// What a tool is: a name, JSON-schema arguments (TypeBox), a safety level, and a run function.
// The safety level is what the permission hook (permission-hook.ts) decides on; spec 2.6 leaves the
// full set "not shown" — svc uses four, ordered by how much harm a wrong call can do (docs/agent.md).
import type { Static, TSchema } from '@sinclair/typebox';
import type { ToolSpec } from './conversation';
import type { SafetyLevel, SduiComponent, SpecialistName } from '../../protocol/session';

export type { SafetyLevel } from '../../protocol/session';

export const SAFETY_ORDER: Readonly<Record<SafetyLevel, number>> = { passive: 0, active: 1, privileged: 2, dangerous: 3 };

export interface ToolContext {
  sessionId: string;
  turnId: string;
  specialist: SpecialistName;
  signal: AbortSignal;
}

export interface ToolOutcome {
  /** One line for humans (CLI, tool_result frames, the local agent's answers). */
  summary: string;
  /** Structured result given to the model as JSON. */
  data?: unknown;
  /** UI to render (sent as sdui_payload). */
  ui?: SduiComponent;
  /** Data-source ids the result came from (memory ids, device ids): the `sources` of spec 2.10. */
  sources?: string[];
}

export interface Tool<S extends TSchema = TSchema> {
  readonly spec: ToolSpec<S>;
  readonly safety: SafetyLevel;
  /**
   * Offered whichever specialist answers (router/specialists.ts gives most of them a few tools): for
   * tools that serve any subject, like starting a TaskFlow ("remind me…", "every morning…").
   */
  readonly everywhere?: boolean;
  run(args: Static<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** Declares a tool with its argument type inferred from the schema. */
export const defineTool = <S extends TSchema>(tool: Tool<S>): Tool => tool;

/** A failure the model should hear about (bad arguments, unknown device): not a bug, so not logged as one. */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/**
 * A refusal by the permission plane inside a tool (a path outside every folder grant, a grant without
 * write): the tool runner reports it as status `denied` and counts it in svc_tool_denials_total.
 */
export class ToolDenied extends ToolFailure {
  constructor(message: string) {
    super(message);
    this.name = 'ToolDenied';
  }
}
