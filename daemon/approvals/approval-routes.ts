// /api/approvals (spec 4.8, 2.6, 2.7): the pending list, approve (runs the held call once) and reject.
import { Type } from '@sinclair/typebox';
import type { TypedRoutes } from '../http/route-kit';
import { ErrorEnvelope } from '../../protocol/errors';
import { ApprovalList, ApprovalListQuery, ApprovalParams, ApprovalResolution, ApprovalResolveBody } from '../../protocol/approvals';
import type { Approvals } from './approvals';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 503: ErrorEnvelope };
/** A paired phone or browser answers approvals too (docs/pairing.md "Device principals"). */
const config = { principals: ['admin', 'device'] } as const;

export const approvalRoutes =
  (approvals: Approvals): TypedRoutes =>
  async (app) => {
    app.get('/api/approvals', { config, schema: { querystring: ApprovalListQuery, response: { 200: ApprovalList, ...errors } } }, async (request) => {
      const items = await approvals.list({ limit: request.query.limit, ...(request.query.session_id === undefined ? {} : { sessionId: request.query.session_id }) });
      return { count: items.length, approvals: items };
    });

    const resolve = { params: ApprovalParams, body: Type.Optional(ApprovalResolveBody), response: { 200: ApprovalResolution, ...errors } };
    app.post('/api/approvals/:request_id/approve', { config, schema: resolve }, async (request) => approvals.approve(request.params.request_id, request.body?.session_id));
    app.post('/api/approvals/:request_id/reject', { config, schema: resolve }, async (request) => approvals.reject(request.params.request_id, request.body?.session_id));
  };
