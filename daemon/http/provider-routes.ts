// /api/providers: the HTTP side of `svc key` and `svc models` (spec 4.14; the paths are ours, the spec
// does not show them — docs/providers.md "HTTP API"). Secrets only ever travel inward (POST keys):
// every answer of this plugin, errors included, passes the secret scrubber, since cooldown and probe
// messages quote what a provider said (issue 8 §4).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AddKeyBody,
  AddKeyResponse,
  KeyParams,
  KeysResponse,
  ModelTestBody,
  ModelTestResponse,
  ModelsResponse,
  PinBody,
  PinResponse,
  ProviderFilterBody,
  ProviderParams,
  ProvidersResponse,
  RecoverResponse,
  RemoveKeyResponse,
  ResetCooldownsResponse,
} from '../../protocol/providers';
import { ErrorEnvelope } from '../../protocol/errors';
import { Type } from '@sinclair/typebox';
import type { KeyAdmin } from '../providers/key-admin';
import type { ModelAdmin } from '../providers/model-admin';

export interface ProviderRoutesDeps {
  keys: KeyAdmin;
  models: ModelAdmin;
  /** The secret scrubber (daemon/agent/tools/secret-scrubber.ts). */
  scrubber?: { scrubValue<T>(value: T): T };
}

/** A POST whose body is optional may come without one: validate it as `{}`. */
const emptyBody = async (req: { body: unknown }): Promise<void> => {
  req.body ??= {};
};

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 422: ErrorEnvelope, 502: ErrorEnvelope };

export const providerRoutes =
  (deps: ProviderRoutesDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const scrubber = deps.scrubber;
    if (scrubber) app.addHook('preSerialization', async (_req, _reply, payload) => scrubber.scrubValue(payload));

    app.get('/api/providers', { schema: { response: { 200: ProvidersResponse } } }, async () => ({ providers: deps.models.providers() }));

    app.get('/api/providers/keys', { schema: { querystring: Type.Object({ provider: Type.Optional(Type.String()) }), response: { 200: KeysResponse } } }, async (req) => ({
      keys: deps.keys.list(req.query.provider),
    }));

    app.post('/api/providers/:provider/keys', { schema: { params: ProviderParams, body: AddKeyBody, response: { 201: AddKeyResponse, ...errors } } }, async (req, reply) => {
      const { key, probe } = await deps.keys.add(req.params.provider, req.body.label, req.body.secret, { replace: req.body.replace, probe: req.body.probe });
      return reply.status(201).send({ key, probe: { ok: probe.ok, latency_ms: probe.latency_ms, models: probe.models } });
    });

    app.delete('/api/providers/:provider/keys/:label', { schema: { params: KeyParams, response: { 200: RemoveKeyResponse, ...errors } } }, async (req) => {
      await deps.keys.remove(req.params.provider, req.params.label);
      return { provider: req.params.provider, label: req.params.label, removed: true as const };
    });

    app.post('/api/providers/cooldowns/reset', { preValidation: emptyBody, schema: { body: ProviderFilterBody, response: { 200: ResetCooldownsResponse } } }, async (req) => ({
      cleared: await deps.keys.resetCooldowns(req.body.provider),
    }));

    app.post('/api/providers/keys/recover', { preValidation: emptyBody, schema: { body: ProviderFilterBody, response: { 200: RecoverResponse } } }, async (req) =>
      deps.keys.recover(req.body.provider),
    );

    app.get('/api/providers/:provider/models', { schema: { params: ProviderParams, response: { 200: ModelsResponse, ...errors } } }, async (req) => deps.models.list(req.params.provider));

    app.post('/api/providers/:provider/models/test', { preValidation: emptyBody, schema: { params: ProviderParams, body: ModelTestBody, response: { 200: ModelTestResponse, ...errors } } }, async (req) =>
      deps.models.test(req.params.provider, req.body.model),
    );

    app.put('/api/providers/:provider/model-pin', { schema: { params: ProviderParams, body: PinBody, response: { 200: PinResponse, ...errors } } }, async (req) =>
      deps.models.pin(req.params.provider, req.body.model),
    );

    app.delete('/api/providers/:provider/model-pin', { schema: { params: ProviderParams, response: { 200: PinResponse, ...errors } } }, async (req) => deps.models.pin(req.params.provider, null));
  };
