// Sync over HTTP (spec 4.14 `svc sync`, 4.13 /sync; protocol/sync-api.ts; docs/sync.md "What the user
// sees"): status, peers, brain pairing (both sides), sync now, forget, and the /sync WebSocket. With
// sync off (SVC_SYNC_DISABLED=1, settings sync.enabled false) status and peers still answer, saying
// so, and everything that would sync is a 409; /sync is not mounted at all.
import { Type } from '@sinclair/typebox';
import { ErrorEnvelope } from '../../protocol/errors';
import { BRAIN_ID_PATTERN, SYNC_HELLO_HEADER } from '../../protocol/sync-link';
import { SyncNowBody, SyncNowResult, SyncPairAcceptBody, SyncPairBody, SyncPeerList, SyncPeerView, SyncStatus } from '../../protocol/sync-api';
import type { SyncNowBody as NowBody, SyncNowResult as NowResult, SyncPairAcceptBody as AcceptBody, SyncPairBody as PairBody, SyncPeerView as PeerView, SyncStatus as Status } from '../../protocol/sync-api';
import type { SyncPairResponse } from '../../protocol/sync-link';
import { routes } from '../http/route-kit';
import type { RoutePlugin } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import type { UpgradeVerdict } from './sync-links';
import type { WebSocket } from 'ws';

/** What the routes ask of the sync capability. */
export interface SyncService {
  status(): Promise<Status>;
  peers(): Promise<PeerView[]>;
  pair(body: PairBody): Promise<PeerView>;
  /** `remote`: the address the request came from (which of the offered URLs to dial back). */
  accept(body: AcceptBody, remote: string): Promise<SyncPairResponse>;
  now(body: NowBody): Promise<NowResult>;
  forget(brainId: string): Promise<boolean>;
}

const PeerParams = Type.Object({ brain_id: Type.String({ pattern: BRAIN_ID_PATTERN, maxLength: 36 }) }, { additionalProperties: false });
const Forgotten = Type.Object({ brain_id: Type.String(), forgotten: Type.Literal(true) }, { additionalProperties: false });
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 502: ErrorEnvelope };

/** Sync is off: what would sync is refused with the reason. */
export const syncOff = (disabledBy: string): AppError => new AppError('CONFLICT', `sync is off on this brain (${disabledBy}): it is single-node`, { sync: 'disabled', disabled_by: disabledBy });

export const syncRoutes = (service: SyncService): RoutePlugin =>
  routes(async (app) => {
    app.get('/api/sync/status', { schema: { response: { 200: SyncStatus } } }, () => service.status());
    app.get('/api/sync/peers', { schema: { response: { 200: SyncPeerList } } }, async () => ({ peers: await service.peers() }));
    app.post('/api/sync/pair', { schema: { body: SyncPairBody, response: { 201: SyncPeerView, ...errors } } }, async (req, reply) => reply.status(201).send(await service.pair(req.body)));
    // The other brain's half of pairing: before it has a key, so the token is the proof (as /api/devices/pair/complete).
    app.post('/api/sync/pair/accept', { config: { principals: ['anonymous'] }, schema: { body: SyncPairAcceptBody, response: { 201: Type.Unknown(), ...errors } } }, async (req, reply) =>
      reply.status(201).send(await service.accept(req.body, req.ip)),
    );
    app.post('/api/sync/now', { schema: { body: Type.Optional(SyncNowBody), response: { 200: SyncNowResult, ...errors } } }, (req) => service.now(req.body ?? {}));
    app.delete('/api/sync/peers/:brain_id', { schema: { params: PeerParams, response: { 200: Forgotten, ...errors } } }, async (req) => {
      if (!(await service.forget(req.params.brain_id))) throw new AppError('NOT_FOUND', `peer ${req.params.brain_id} is not paired (or was forgotten already)`, { brain_id: req.params.brain_id });
      return { brain_id: req.params.brain_id, forgotten: true as const };
    });
  });

/**
 * GET /sync: public at the HTTP level (a peer brain has no bearer credential; its handshake proves
 * it). A hello in the upgrade request is judged before the upgrade, so a refusal is an HTTP status.
 */
export const syncSocketRoute = (upgrade: (helloHeader: string | undefined, remote: string) => UpgradeVerdict): RoutePlugin => {
  const verdicts = new WeakMap<object, Extract<UpgradeVerdict, { ok: true }>>();
  return routes(async (app) => {
    app.get(
      '/sync',
      {
        websocket: true,
        config: { principals: ['anonymous'] },
        preValidation: async (request, reply) => {
          // A plain GET is told to upgrade (426) by the app; only an upgrade is judged.
          if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') return;
          const header = request.headers[SYNC_HELLO_HEADER];
          const verdict = upgrade(Array.isArray(header) ? header[0] : header, request.ip);
          if (verdict.ok) {
            verdicts.set(request, verdict);
            return;
          }
          await reply.status(verdict.status).send({ error: { code: verdict.status === 401 ? 'UNAUTHORIZED' : 'SYNC_REFUSED', message: verdict.message, details: { refusal: verdict.code } } });
        },
      },
      (socket: WebSocket, request) => {
        const verdict = verdicts.get(request);
        if (verdict === undefined) {
          socket.close(1011, 'no verdict');
          return;
        }
        verdict.accept(socket);
      },
    );
  });
};
