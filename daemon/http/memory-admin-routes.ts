// Memory endpoints above the tiers (docs/memory.md): session snapshots (snapshot, branch, restore),
// the wiki (list, read, rebuild), decay (show, tune) and the backend report.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  BackendReport, DecayPatch, DecayReport, Deleted, IdParams, SessionRef, SlugParams, Snapshot, SnapshotCreate, SnapshotDetail, SnapshotList,
  SnapshotListQuery, SnapshotRestore, WikiList, WikiPage, WikiRebuild,
} from '../../protocol/memory';
import { ErrorEnvelope } from '../../protocol/errors';
import { notFound } from '../kernel/errors';
import type { MemoryCapability } from '../memory/create-memory';
import { decayReport } from '../memory/decay-report';
import { backendReport } from '../memory/backend-report';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const memoryAdminRoutes =
  (cap: MemoryCapability, clock: () => number = Date.now): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { snapshots, wiki } = cap;

    app.post('/api/memory/snapshots', { schema: { body: SnapshotCreate, response: { 201: Snapshot, ...errors } } }, async (req, reply) =>
      reply.status(201).send(await snapshots.take(req.body.session_id, req.body.label)),
    );
    app.get('/api/memory/snapshots', { schema: { querystring: SnapshotListQuery, response: { 200: SnapshotList, ...errors } } }, async (req) => ({ items: snapshots.list(req.query.session_id) }));
    app.get('/api/memory/snapshots/:id', { schema: { params: IdParams, response: { 200: SnapshotDetail, ...errors } } }, async (req) => snapshots.get(req.params.id));
    app.post('/api/memory/snapshots/:id/branch', { schema: { params: IdParams, response: { 201: SessionRef, ...errors } } }, async (req, reply) =>
      reply.status(201).send(await snapshots.branch(req.params.id)),
    );
    app.post('/api/memory/snapshots/:id/restore', { schema: { params: IdParams, body: Type.Optional(SnapshotRestore), response: { 200: SessionRef, ...errors } } }, async (req) =>
      snapshots.restore(req.params.id, req.body?.session_id),
    );
    app.delete('/api/memory/snapshots/:id', { schema: { params: IdParams, response: { 200: Deleted, ...errors } } }, async (req) => {
      if (!(await snapshots.delete(req.params.id))) throw notFound('snapshot', req.params.id);
      return { id: req.params.id, deleted: true as const };
    });

    app.get('/api/memory/wiki', { schema: { response: { 200: WikiList } } }, async () => ({ items: wiki.list() }));
    app.get('/api/memory/wiki/:slug', { schema: { params: SlugParams, response: { 200: WikiPage, ...errors } } }, async (req) => wiki.read(req.params.slug));
    app.post('/api/memory/wiki/rebuild', { schema: { response: { 200: WikiRebuild } } }, async () => wiki.rebuild());

    app.get('/api/memory/decay', { schema: { response: { 200: DecayReport } } }, async () => decayReport(cap.store, cap.decay.get(), clock()));
    app.patch('/api/memory/decay', { schema: { body: DecayPatch, response: { 200: DecayReport, ...errors } } }, async (req) => {
      await cap.decay.set(req.body);
      return decayReport(cap.store, cap.decay.get(), clock());
    });

    app.get('/api/memory/backend', { schema: { querystring: Type.Object({ probe: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), response: { 200: BackendReport, ...errors } } }, async (req) =>
      backendReport(cap, req.query.probe === true),
    );
  };
