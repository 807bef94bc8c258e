// GET /api/audit (docs/security.md "The audit log"): the admin reads what was decided; nothing writes
// or deletes entries over HTTP.
import { AuditList, AuditQuery } from '../../protocol/audit';
import { routes } from '../http/route-kit';
import type { RoutePlugin } from '../kernel/capability';
import type { AuditLog } from './audit-log';

export const auditRoutes = (log: AuditLog): RoutePlugin =>
  routes(async (app) => {
    app.get('/api/audit', { schema: { querystring: AuditQuery, response: { 200: AuditList } } }, (req) => ({
      entries: log.list({ limit: req.query.limit ?? 100, ...(req.query.tag ? { tag: req.query.tag } : {}) }),
    }));
  });
