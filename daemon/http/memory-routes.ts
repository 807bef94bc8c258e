// Memory endpoints of spec 4.4 plus the read/update/delete paths the issue asks for (docs/memory.md).
// Routes only validate and translate; the Memory facade and its repositories do the work.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  Deleted, EpisodePage, Episode, IdParams, KnowledgeQuery, KnowledgeResult, LIMITS, Note, NoteCreate, NoteUpdate, PageQuery,
  SearchQuery, SearchResponse, Triple, TriplesCreate, TripleUpdate,
} from '../../protocol/memory';
import { ErrorEnvelope } from '../../protocol/errors';
import { notFound } from '../kernel/errors';
import type { MemoryCapability } from '../memory/create-memory';
import { memoryAdminRoutes } from './memory-admin-routes';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope };
const NotePage = Type.Object({ items: Type.Array(Note), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const memoryRoutes =
  (cap: MemoryCapability): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { memory } = cap;
    const { notes, episodes, knowledge } = memory.parts;
    await app.register(memoryAdminRoutes(cap));

    app.get('/api/memory/search', { schema: { querystring: SearchQuery, response: { 200: SearchResponse, ...errors } } }, async (req) =>
      memory.search(req.query.q, { limit: req.query.limit ?? LIMITS.search.default }),
    );

    // ── notes ──
    app.post('/api/memory/note', { schema: { body: NoteCreate, response: { 201: Note, ...errors } } }, async (req, reply) => {
      const note = await memory.remember(req.body.text, { ...(req.body.source ? { source: req.body.source } : {}), ...(req.body.tags ? { tags: req.body.tags } : {}) });
      return reply.status(201).send(note);
    });
    app.get('/api/memory/notes', { schema: { querystring: PageQuery, response: { 200: NotePage, ...errors } } }, async (req) =>
      notes.list({ cursor: req.query.cursor, limit: req.query.limit ?? LIMITS.page.default }),
    );
    app.get('/api/memory/notes/:id', { schema: { params: IdParams, response: { 200: Note, ...errors } } }, async (req) => notes.get(req.params.id) ?? found('note', req.params.id));
    app.patch('/api/memory/notes/:id', { schema: { params: IdParams, body: NoteUpdate, response: { 200: Note, ...errors } } }, async (req) => notes.update(req.params.id, req.body));
    app.delete('/api/memory/notes/:id', { schema: { params: IdParams, response: { 200: Deleted, ...errors } } }, async (req) => deleted('note', req.params.id, await notes.delete(req.params.id)));

    // ── episodes ──
    app.get('/api/memory/episodes', { schema: { querystring: PageQuery, response: { 200: EpisodePage, ...errors } } }, async (req) =>
      episodes.list({ cursor: req.query.cursor, limit: req.query.limit ?? LIMITS.page.default }),
    );
    app.get('/api/memory/episodes/:id', { schema: { params: IdParams, response: { 200: Episode, ...errors } } }, async (req) => episodes.get(req.params.id) ?? found('episode', req.params.id));
    app.delete('/api/memory/episodes/:id', { schema: { params: IdParams, response: { 200: Deleted, ...errors } } }, async (req) =>
      deleted('episode', req.params.id, await episodes.delete(req.params.id)),
    );

    // ── knowledge graph ──
    app.get('/api/memory/knowledge', { schema: { querystring: KnowledgeQuery, response: { 200: KnowledgeResult, ...errors } } }, async (req) => memory.knowledge(req.query));
    app.post('/api/memory/knowledge', { schema: { body: TriplesCreate, response: { 201: Type.Object({ triples: Type.Array(Triple) }), ...errors } } }, async (req, reply) =>
      reply.status(201).send({ triples: await memory.addTriples(req.body.triples, req.body.source) }),
    );
    app.get('/api/memory/knowledge/:id', { schema: { params: IdParams, response: { 200: Triple, ...errors } } }, async (req) => knowledge.get(req.params.id) ?? found('triple', req.params.id));
    app.patch('/api/memory/knowledge/:id', { schema: { params: IdParams, body: TripleUpdate, response: { 200: Triple, ...errors } } }, async (req) =>
      knowledge.setConfidence(req.params.id, req.body.confidence),
    );
    app.delete('/api/memory/knowledge/:id', { schema: { params: IdParams, response: { 200: Deleted, ...errors } } }, async (req) =>
      deleted('triple', req.params.id, await knowledge.delete(req.params.id)),
    );
  };

function found(what: string, id: string): never {
  throw notFound(what, id);
}

function deleted(what: string, id: string, ok: boolean): { id: string; deleted: true } {
  if (!ok) throw notFound(what, id);
  return { id, deleted: true };
}
