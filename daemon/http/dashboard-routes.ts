// /api/dashboard (spec 4.2, 2.10): the web dashboard's view of the brain, and one-shot commands that
// run a full agent turn. A command without session_id runs in the shared "dashboard" session, so
// follow-up questions from the dashboard keep their context.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CommandRequest, CommandResponse, DashboardContext, DashboardStatus, Timeline, TimelineQuery } from '../../protocol/dashboard';
import { AppError, notFound } from '../kernel/errors';
import type { Agent } from '../agent/agent';
import { SessionBusyError } from '../agent/session';
import { DASHBOARD_SESSION, newTurnId } from '../agent/session-manager';
import type { IdentitySource } from '../kernel/ports';
import { parseSoul, userName } from '../identity/identity-text';

export interface DashboardRouteDeps {
  agent: Agent;
  identity: IdentitySource;
}

export const dashboardRoutes =
  (deps: DashboardRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { agent } = deps;

    app.get('/api/dashboard/status', { schema: { response: { 200: DashboardStatus } } }, async () => ({ ...agent.status(), pid: process.pid }));

    app.get('/api/dashboard/context', { schema: { response: { 200: DashboardContext } } }, async () => ({
      generated_at: new Date().toISOString(),
      identity: { user_name: userName(deps.identity.user()), assistant_name: parseSoul(deps.identity.soul()).name },
      // No health or calendar source exists yet: empty sections, not errors (issue 4).
      health: { readings: [] },
      scene: { devices: agent.status().devices.items },
      calendar: { events: [] },
    }));

    app.get('/api/dashboard/timeline', { schema: { querystring: TimelineQuery, response: { 200: Timeline } } }, async (request) => ({
      items: agent.activity.recent(request.query.limit ?? 50),
    }));

    app.post('/api/dashboard/command', { schema: { body: CommandRequest, response: { 200: CommandResponse } } }, async (request) => {
      const { text, session_id } = request.body;
      const session = session_id === undefined ? agent.sessions.open(DASHBOARD_SESSION) : agent.sessions.get(session_id);
      if (!session) throw notFound('session', session_id ?? DASHBOARD_SESSION);
      try {
        const r = await agent.sessions.submit(session, text, newTurnId());
        return { response: r.text, sdui: r.sdui, sources: r.sources, session_id: session.id, turn_id: r.turnId, specialist: r.specialist };
      } catch (err) {
        if (err instanceof SessionBusyError) throw new AppError('RATE_LIMITED', err.message, { pending: err.pending });
        throw err;
      }
    });
  };
