// The approvals capability (spec 2.6, 2.7, 4.8): installs the brain's permission hook, keeps held tool
// calls in the store, and serves /api/approvals. It owns svc_supervisor_approval_queue (spec 4.12).
import { join } from 'node:path';
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { ApprovalSettings } from './approval-policy';
import { APPROVAL_MIGRATIONS, ApprovalQueue } from './approval-queue';
import { approvalRoutes } from './approval-routes';
import { Approvals } from './approvals';
import { livePolicies, policyRoutes } from './policy-routes';

export const APPROVALS = 'approvals';

export const approvalsCapability = defineCapability({
  name: APPROVALS,
  settings: ApprovalSettings,
  create: (context, settings) => {
    const gauge = context.metrics.gauge(APPROVALS, { name: 'svc_supervisor_approval_queue', help: 'Tool calls waiting for approval' });
    const queue = new ApprovalQueue(context.store, context.clock, settings.ttl_minutes);
    // PUT /api/approvals/policies changes these in place: the next call sees the change, no restart.
    const live = livePolicies(settings);
    const approvals = new Approvals({ queue, settings: live, tools: context.tools, bus: context.bus, gauge, clock: context.clock, logger: context.logger });
    context.permissions.use(APPROVALS, approvals);
    return {
      migrations: APPROVAL_MIGRATIONS,
      // The table exists once the brain has run the migrations, so the first count waits for start
      // (a read; expired requests are marked when the list is next read).
      parts: [{ name: 'approvals-queue', start: () => approvals.changed() }],
      routes: [routes(approvalRoutes(approvals)), routes(policyRoutes(live, join(context.home, 'settings.json'), context.logger))],
    };
  },
});
