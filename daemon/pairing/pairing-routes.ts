// /api/devices/* (spec 4.6; docs/pairing.md "API"). Minting, listing, prune, revoke and code claims
// need the API token; check, verify_pin, complete, announce and status are what an unpaired device
// calls, so they take no credential — the pairing token or code is the proof, and per-caller limits
// bound guessing. Handoff is also open to a paired phone or browser for its own session.
import { Type } from '@sinclair/typebox';
import type { TypedRoutes } from '../http/route-kit';
import { ErrorEnvelope } from '../../protocol/errors';
import {
  AnnounceBody,
  AnnounceResponse,
  CodeClaimBody,
  CodeClaimResponse,
  CodeStatusQuery,
  CodeStatusResponse,
  CompletePairBody,
  CompletePairResponse,
  DeviceParams,
  HandoffBody,
  HandoffResponse,
  MintedPair,
  MintPairBody,
  PairCheckResponse,
  PairedList,
  PairedQuery,
  PairUrlQuery,
  PairUrlResponse,
  PruneBody,
  PruneResponse,
  RevokeResponse,
  TokenQuery,
  VerifyPinBody,
  VerifyPinResponse,
} from '../../protocol/pairing';
import type { Clock } from '../kernel/capability';
import { RetryLater, type CodePairing } from './code-pairing';
import type { Pairing } from './pairing';
import { AttemptLimiter } from './rate-limit';
import { renderQr } from './pair-qr';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope };
const PUBLIC = { principals: ['anonymous'] } as const;

/** PIN attempts per caller (any token) and announces per caller, per minute. */
export const PIN_ATTEMPTS = { max: 10, windowMs: 60_000 } as const;
export const ANNOUNCES = { max: 30, windowMs: 60_000 } as const;

export const pairingRoutes =
  (pairing: Pairing, codes: CodePairing, clock: Clock): TypedRoutes =>
  async (app) => {
    const pinAttempts = new AttemptLimiter(PIN_ATTEMPTS, clock);
    const announces = new AttemptLimiter(ANNOUNCES, clock);
    /** Counts one attempt of `caller`; a 429 with Retry-After past the limit. */
    const spend = (limiter: AttemptLimiter, caller: string, what: string): void => {
      const wait = limiter.retryAfterMs(caller);
      if (wait > 0) throw new RetryLater(`too many ${what}: wait ${Math.ceil(wait / 1000)} s`, Math.ceil(wait / 1000));
      limiter.record(caller);
    };

    // A 429 carries Retry-After (RFC 9110 10.2.3) next to details.retry_after_seconds.
    app.addHook('onError', async (_request, reply, error) => {
      if (error instanceof RetryLater) void reply.header('retry-after', String(error.retryAfterSeconds));
    });

    app.post('/api/devices/pair', { schema: { body: Type.Optional(MintPairBody), response: { 201: MintedPair, ...errors } } }, async (request, reply) => reply.status(201).send(await pairing.mint(request.body ?? {})));

    app.get('/api/devices/pair/url', { schema: { querystring: PairUrlQuery, response: { 200: PairUrlResponse, ...errors } } }, async (request) => {
      const { format: _format, ...mint } = request.query;
      return pairing.pairUrl(mint);
    });

    app.get('/api/devices/pair/qr', { schema: { querystring: PairUrlQuery } }, async (request, reply) => {
      const { format = 'png', ...mint } = request.query;
      const minted = await pairing.pairUrl(mint);
      const image = await renderQr(minted.url, format);
      // The token is in the image; its id, expiry and a PIN the brain chose travel beside it.
      void reply.header('content-type', image.contentType).header('cache-control', 'no-store').header('x-pair-id', minted.pair_id).header('x-pair-expires-at', String(minted.payload.expires_at));
      if (minted.pin !== undefined) void reply.header('x-pair-pin', minted.pin);
      return reply.send(image.body);
    });

    app.get('/api/devices/pair/check', { config: PUBLIC, schema: { querystring: TokenQuery, response: { 200: PairCheckResponse, ...errors } } }, async (request) => pairing.check(request.query.token));

    app.post('/api/devices/pair/verify_pin', { config: PUBLIC, schema: { body: VerifyPinBody, response: { 200: VerifyPinResponse, ...errors } } }, async (request) => {
      spend(pinAttempts, request.ip, 'PIN attempts');
      await pairing.verifyPin(request.body.token, request.body.pin);
      return { verified: true as const };
    });

    app.post('/api/devices/pair/complete', { config: PUBLIC, schema: { body: CompletePairBody, response: { 201: CompletePairResponse, ...errors } } }, async (request, reply) =>
      reply.status(201).send(await pairing.complete(request.body)),
    );

    app.post('/api/devices/pair/announce', { config: PUBLIC, schema: { body: AnnounceBody, response: { 200: AnnounceResponse, ...errors } } }, async (request) => {
      spend(announces, request.ip, 'announces');
      return codes.announce(request.body);
    });

    app.get('/api/devices/pair/status', { config: PUBLIC, schema: { querystring: CodeStatusQuery, response: { 200: CodeStatusResponse, ...errors } } }, async (request) => codes.status(request.query));

    app.post('/api/devices/pair/code/claim', { schema: { body: CodeClaimBody, response: { 200: CodeClaimResponse, ...errors } } }, async (request) => codes.claim(request.body, `${request.principal.kind}@${request.ip}`));

    app.get('/api/devices/paired', { schema: { querystring: PairedQuery, response: { 200: PairedList, ...errors } } }, async (request) => pairing.list(request.query.include_unclaimed === true));

    app.post('/api/devices/pair/prune', { schema: { body: Type.Optional(PruneBody), response: { 200: PruneResponse, ...errors } } }, async (request) => pairing.prune(request.body?.older_than_seconds));

    app.delete('/api/devices/:device_id', { schema: { params: DeviceParams, response: { 200: RevokeResponse, ...errors } } }, async (request) => pairing.revoke(request.params.device_id));

    app.post('/api/devices/handoff', { config: { principals: ['admin', 'device'] }, schema: { body: HandoffBody, response: { 200: HandoffResponse, ...errors } } }, async (request) => {
      const p = request.principal;
      return pairing.handoff(request.body, p.kind === 'device' ? { kind: 'device', id: p.id } : { kind: 'admin' });
    });
  };
