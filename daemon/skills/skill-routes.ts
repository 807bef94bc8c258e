// /api/skills (spec 4.3; docs/skills.md "HTTP API"): list (spec 2.8), detail, execute, install,
// uninstall, and enable/disable (svc's additions). Install failures of trust are 422 with the spec 7
// body {error: "UnverifiedManifest", reason}; an install of the same or an older version is 409.
import { ErrorEnvelope, UnverifiedManifestBody } from '../../protocol/errors';
import { SkillDetail, SkillExecuteBody, SkillIdParams, SkillInstallBody, SkillInstallResult, SkillList, SkillListItem, SkillRemoved, SkillRunView } from '../../protocol/skills';
import { principalId, routes } from '../http/route-kit';
import type { RoutePlugin } from '../kernel/capability';
import { SKILL_SESSION, type Skills } from './skills';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 502: ErrorEnvelope };


/** `loaded`: resolves once the skills are loaded after start (every route waits for it). */
export const skillRoutes = (skills: Skills, loaded: () => Promise<void> = () => Promise.resolve()): RoutePlugin =>
  routes(async (app) => {
    app.addHook('preHandler', async () => {
      await loaded();
    });
    app.get('/api/skills', { schema: { response: { 200: SkillList } } }, () => ({ skills: skills.list() }));
    app.get('/api/skills/:id', { schema: { params: SkillIdParams, response: { 200: SkillDetail, ...errors } } }, (req) => skills.detail(req.params.id));
    app.post('/api/skills/:id/execute', { schema: { params: SkillIdParams, body: SkillExecuteBody, response: { 200: SkillRunView, ...errors } } }, (req) =>
      skills.execute(req.params.id, req.body.params ?? {}, 'manual', SKILL_SESSION),
    );
    app.post('/api/skills/install', { schema: { body: SkillInstallBody, response: { 201: SkillInstallResult, 422: UnverifiedManifestBody, ...errors } } }, async (req, reply) =>
      reply.status(201).send(await skills.install(req.body, principalId(req.principal))),
    );
    app.post('/api/skills/:id/enable', { schema: { params: SkillIdParams, response: { 200: SkillListItem, ...errors } } }, (req) => skills.setEnabled(req.params.id, true));
    app.post('/api/skills/:id/disable', { schema: { params: SkillIdParams, response: { 200: SkillListItem, ...errors } } }, (req) => skills.setEnabled(req.params.id, false));
    app.delete('/api/skills/:id', { schema: { params: SkillIdParams, response: { 200: SkillRemoved, ...errors } } }, async (req) => {
      await skills.remove(req.params.id);
      return { id: req.params.id, removed: true as const };
    });
  });
