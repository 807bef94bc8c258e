// /api/grants (issue 11; shapes in docs/files.md): list, grant and revoke the folders the file tools
// may touch. A grant applies to the next tool call, no restart.
import { Value } from '@sinclair/typebox/value';
import { GrantList, GrantRequest, GrantRevoke, GrantRevoked, GrantRevokeQuery, Grant } from '../../protocol/files';
import type { TypedRoutes } from '../http/route-kit';
import { AppError } from '../kernel/errors';
import { parseDuration, type GrantStore } from './grants';

export const grantRoutes =
  (grants: GrantStore): TypedRoutes =>
  async (app) => {
    app.get('/api/grants', { schema: { response: { 200: GrantList } } }, async () => ({ grants: grants.list() }));

    app.post('/api/grants', { schema: { body: GrantRequest, response: { 201: Grant } } }, async (request, reply) => {
      const { path, write, for: duration } = request.body;
      const grant = await grants.add(path, write === true ? 'write' : 'read', duration === undefined ? undefined : parseDuration(duration));
      return reply.code(201).send(grant);
    });

    // The path in a body or, for clients that send no body with DELETE, in the query string.
    app.delete('/api/grants', { schema: { querystring: GrantRevokeQuery, response: { 200: GrantRevoked } } }, async (request) => {
      const body: unknown = request.body;
      const fromBody = body !== undefined && body !== null && Value.Check(GrantRevoke, body) ? body.path : undefined;
      if (body !== undefined && body !== null && fromBody === undefined) throw new AppError('BAD_REQUEST', 'body must be {"path": "<granted folder>"} and nothing else', null);
      const path = fromBody ?? request.query.path;
      if (path === undefined) throw new AppError('BAD_REQUEST', 'say which grant to revoke: {"path": ...} in the body or ?path= in the query', null);
      if (fromBody !== undefined && request.query.path !== undefined && request.query.path !== fromBody) throw new AppError('BAD_REQUEST', 'the body and the query name different paths', null);
      return { revoked: await grants.revoke(path) };
    });
  };
