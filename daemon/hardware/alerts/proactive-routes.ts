// POST /api/proactive/dismiss (spec 4.6) and GET /api/proactive/alerts (docs/hardware.md "Proactive
// alerts"): what the brain noticed in device telemetry, and the user's "not useful" that it learns from.
import { Type } from '@sinclair/typebox';
import type { TypedRoutes } from '../../http/route-kit';
import type { ProactiveAlerts } from './proactive';
import { ErrorEnvelope } from '../../../protocol/errors';
import { DismissBody, DismissResult, ProactiveAlertList } from '../../../protocol/hardware';

const AlertListQuery = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('dismissed'), Type.Literal('cleared')])) },
  { additionalProperties: false },
);

export const proactiveRoutes =
  (alerts: Pick<ProactiveAlerts, 'list' | 'dismiss'>): TypedRoutes =>
  async (app) => {
    app.get('/api/proactive/alerts', { schema: { querystring: AlertListQuery, response: { 200: ProactiveAlertList, 400: ErrorEnvelope } } }, async (request) => ({ alerts: alerts.list(request.query.status) }));
    app.post('/api/proactive/dismiss', { schema: { body: DismissBody, response: { 200: DismissResult, 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope } } }, async (request) => alerts.dismiss(request.body.alert_id));
  };
