// /api/access (spec 4.7; docs/access.md): the status, and the four changes. The spec names remote-up
// and remote-down; lan and localhost are svc's own, shaped the same way (a POST without a body that
// answers the new status), so `svc access lan|localhost` needs no restart. Admin only.
import type { TypedRoutes } from '../http/route-kit';
import { ErrorEnvelope } from '../../protocol/errors';
import { AccessStatus } from '../../protocol/access';
import type { AccessControl } from './access-control';

export const accessRoutes =
  (control: AccessControl): TypedRoutes =>
  async (app) => {
    const schema = { response: { 200: AccessStatus, 409: ErrorEnvelope } };
    app.get('/api/access/status', { schema }, async () => control.status());
    app.post('/api/access/lan', { schema }, async () => control.setListener('lan'));
    app.post('/api/access/localhost', { schema }, async () => control.setListener('localhost'));
    app.post('/api/access/remote-up', { schema }, async () => control.remoteUp());
    app.post('/api/access/remote-down', { schema }, async () => control.remoteDown());
  };
