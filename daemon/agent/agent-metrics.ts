// The agent's two metrics (spec 4.12), declared by the agent that emits them: tool calls refused by
// the permission plane, and WebSocket sessions with a client attached. Every tool of the shared
// registry has its svc_tool_denials_total series at zero from the moment it is registered (whoever
// registers it: memory, identity, a capability), so a denial is never the series' first sample.
import type { MetricsRegistry } from '../kernel/metrics';
import type { ToolRegistry } from '../kernel/tool-registry';

export interface AgentMetrics {
  toolDenied(tool: string): void;
  /** Sessions with at least one client attached. */
  activeSessions(n: number): void;
}

/** Declares the metrics under the owner `agent` and follows `tools` for the zero series. */
export function agentMetrics(registry: MetricsRegistry, tools: ToolRegistry): AgentMetrics {
  const denials = registry.counter<'tool'>('agent', {
    name: 'svc_tool_denials_total',
    help: 'Tool calls refused by the permission plane',
    labels: ['tool'],
    zero: tools.names().map((tool) => ({ tool })),
  });
  // Adding zero creates the series; a removed tool keeps its series (a counter does not go back).
  tools.onChange((change) => {
    if (change.kind === 'added') denials.inc({ tool: change.name }, 0);
  });
  const sessions = registry.gauge('agent', { name: 'svc_ws_active_sessions', help: 'Open WebSocket client sessions' });
  return {
    toolDenied: (tool) => denials.inc({ tool }),
    activeSessions: (n) => sessions.set(n),
  };
}
