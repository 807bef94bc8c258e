// The taskflows capability (issue 12, spec 1.4, 3.4, 4.11; docs/taskflows.md): durable background
// workflows — the engine, its store, /api/taskflows and the agent's start_taskflow tool. Tool steps go
// through the permission plane like the agent's own calls; prompt steps are turns through the core's
// conversation port.
import { Type } from '@sinclair/typebox';
import { defineCapability } from '../kernel/capability';
import { FlowStore, TASKFLOW_MIGRATIONS } from './flow-store';
import { TaskflowEngine } from './flow-engine';
import { routes } from '../http/route-kit';
import { taskflowRoutes } from './taskflow-routes';
import { taskflowTools } from './taskflow-tools';

export const TASKFLOWS = 'taskflows';
/** The session of a flow created without one (the dashboard's session: its clients see the flow). */
export const DEFAULT_FLOW_SESSION = 'dashboard';

export const TaskflowSettings = Type.Object(
  {
    max_running: Type.Integer({ minimum: 1, maximum: 64, default: 4, description: 'Flows that run at once; the rest queue' }),
    retention_days: Type.Integer({ minimum: 1, maximum: 3650, default: 30, description: 'Completed, failed and cancelled flows are removed this long after their last change' }),
  },
  { additionalProperties: false, default: {} },
);

export const taskflowsCapability = defineCapability({
  name: TASKFLOWS,
  settings: TaskflowSettings,
  create: (context, settings) => {
    const store = new FlowStore(context.store, context.clock);
    const engine = new TaskflowEngine({
      store,
      tools: context.tools,
      permissions: context.permissions,
      conversations: context.core.conversations,
      memory: context.core.memory,
      bus: context.bus,
      clock: context.clock,
      logger: context.logger,
      settings,
      defaultSession: DEFAULT_FLOW_SESSION,
    });
    return {
      migrations: TASKFLOW_MIGRATIONS,
      parts: [{ name: 'engine', start: () => engine.start(), stop: () => engine.stop() }],
      routes: [routes(taskflowRoutes(engine))],
      tools: taskflowTools(engine),
    };
  },
});
