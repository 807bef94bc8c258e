// The registry's HTTP API under /registry/v1 (docs/registry.md "API", docs/api.md): the same routes on a
// brain with the registry capability enabled and on `svc registry serve`. Publishing, the listing,
// item details, downloads and withdrawals are public: a publish and a withdrawal prove who sends them by
// their Ed25519 signatures, and what is listed and downloadable has passed a review. The reviewers'
// queue and reviews take the admin principal: the brain's API token, or the reviewer token of
// `svc registry serve`.
import type { TypedRoutes } from '../http/route-kit';
import { ErrorEnvelope, UnverifiedManifestBody } from '../../protocol/errors';
import {
  DaemonInstallBody,
  DownloadQuery,
  InstalledDaemon,
  InstalledDaemonList,
  ItemDetail,
  ItemList,
  ItemListQuery,
  ItemParams,
  PublishBody,
  PublishResult,
  REGISTRY_PREFIX,
  ReviewBody,
  ReviewListQuery,
  Submission,
  SubmissionList,
  VersionView,
  WithdrawBody,
} from '../../protocol/registry';
import type { RegistryService } from './registry-service';
import type { DaemonInstalls } from './daemon-installs';

const errors = { 400: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 413: ErrorEnvelope, 422: ErrorEnvelope, 429: ErrorEnvelope, 502: ErrorEnvelope };
const anyone = { principals: ['anonymous'] } as const;

/** Response headers of a download: the digest and the detached signature, also in the item's detail. */
export const DOWNLOAD_HEADERS = { sha256: 'x-svc-sha256', keyId: 'x-svc-key-id', signature: 'x-svc-signature', version: 'x-svc-version' } as const;

/** `publishBodyLimit`: the largest publish request (the archive in base64 and its JSON around it). */
export const registryRoutes =
  (registry: RegistryService, publishBodyLimit: number): TypedRoutes =>
  async (app) => {
    app.post(`${REGISTRY_PREFIX}/items`, { bodyLimit: publishBodyLimit, config: anyone, schema: { body: PublishBody, response: { 201: PublishResult, ...errors } } }, async (request, reply) =>
      reply.status(201).send(await registry.publish(request.body)),
    );

    app.get(`${REGISTRY_PREFIX}/items`, { config: anyone, schema: { querystring: ItemListQuery, response: { 200: ItemList, ...errors } } }, async (request) => ({ items: registry.list(request.query) }));

    app.get(`${REGISTRY_PREFIX}/items/:ref`, { config: anyone, schema: { params: ItemParams, response: { 200: ItemDetail, ...errors } } }, async (request) => registry.detail(request.params.ref));

    app.get(`${REGISTRY_PREFIX}/items/:ref/download`, { config: anyone, schema: { params: ItemParams, querystring: DownloadQuery } }, async (request, reply) => {
      const { bytes, view } = registry.download(request.params.ref, request.query.version);
      return reply
        .header('content-type', 'application/gzip')
        .header(DOWNLOAD_HEADERS.sha256, view.sha256)
        .header(DOWNLOAD_HEADERS.keyId, view.key_id)
        .header(DOWNLOAD_HEADERS.signature, view.signature.sig)
        .header(DOWNLOAD_HEADERS.version, view.version)
        .send(bytes);
    });

    app.post(`${REGISTRY_PREFIX}/items/:ref/withdraw`, { config: anyone, schema: { params: ItemParams, body: WithdrawBody, response: { 200: VersionView, ...errors } } }, async (request) =>
      registry.withdraw(request.params.ref, request.body),
    );

    app.get(`${REGISTRY_PREFIX}/review`, { schema: { querystring: ReviewListQuery, response: { 200: SubmissionList, ...errors } } }, async (request) => ({ submissions: registry.submissions(request.query.state) }));

    app.post(`${REGISTRY_PREFIX}/review/:ref`, { schema: { params: ItemParams, body: ReviewBody, response: { 200: Submission, ...errors } } }, async (request) =>
      registry.review(request.params.ref, request.body.decision, request.body.reason, 'the reviewer'),
    );
  };

/** The brain's installed daemons (admin): /api/daemons and /api/daemons/install. `installs` loads the installer on first use. */
export const daemonInstallRoutes =
  (installs: () => Promise<DaemonInstalls>): TypedRoutes =>
  async (app) => {
    app.get('/api/daemons', { schema: { response: { 200: InstalledDaemonList, ...errors } } }, async () => ({ daemons: (await installs()).list() }));
    app.post('/api/daemons/install', { schema: { body: DaemonInstallBody, response: { 201: InstalledDaemon, ...errors, 422: UnverifiedManifestBody } } }, async (request, reply) =>
      reply.status(201).send(await (await installs()).install(request.body)),
    );
  };
