// Brain pairing over HTTP (docs/sync.md "Identity and pairing"). On the brain that minted a pairing
// token of kind `brain` (`svc pair --kind brain`), POST /api/sync/pair/accept takes the other brain's
// signed request: the proof is checked before the token is claimed (a bad proof does not use it up),
// the token is claimed as a paired device through core.pairing, and the peer's key is pinned. On the
// other brain, POST /api/sync/pair (`svc sync pair <url>`) reads the pair URL, verifies the PIN when
// the token needs one, sends the request to each address the URL names until one answers, checks the
// answer's proof against the brain the URL named, and pins that key. Each side can then dial the other.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parsePairUrl, PairPayloadError, type PairPayload } from '../../mesh/pair-payload';
import { SyncPairResponse, type SyncPairRequest } from '../../protocol/sync-link';
import type { SyncPairAcceptBody, SyncPairBody } from '../../protocol/sync-api';
import { acceptPairRequest, acceptPairResponse, pairRequest, pairResponse } from '../../sync/identity-pairing';
import { keyFingerprint, type SyncIdentity } from '../../sync/identity-keys';
import { AppError, badRequest } from '../kernel/errors';
import type { PairingClaims } from '../kernel/ports';
import { syncUrlOf, type PeerRecord, type SyncPeers } from './sync-peers';

/** How long one address of the other brain gets to answer. */
export const PAIR_REQUEST_TIMEOUT_MS = 10_000;
/** The most of the other brain's answer read. */
const ANSWER_MAX_BYTES = 64 * 1024;

export interface SyncPairingDeps {
  readonly identity: SyncIdentity;
  readonly peers: SyncPeers;
  readonly claims: PairingClaims;
  readonly now: () => number;
  readonly logger: Logger;
  /** This brain's /sync URLs other devices can reach now (from the access mode), for the peer to dial back. */
  readonly ownSyncUrls: () => string[];
  /** This brain's name as a peer sees it. */
  readonly name?: string;
  readonly fetch?: typeof fetch;
}

let answerCheck: ReturnType<typeof TypeCompiler.Compile<typeof SyncPairResponse>> | undefined;

const nameOf = (deps: SyncPairingDeps): string => (deps.name ?? hostname()).slice(0, 64) || 'svc';

/**
 * Of the URLs a completing brain offers, the one on the address its request came from (it is reachable
 * there from here), else the first: a brain on two networks lists both, in no order that suits us.
 */
export function dialBackUrl(urls: readonly string[], remote: string | undefined): string | null {
  const from = remote?.replace(/^::ffff:/, '');
  const same = from === undefined ? undefined : urls.find((u) => new URL(u).hostname.replace(/^\[|\]$/g, '') === from);
  return same ?? urls[0] ?? null;
}

/** The minting brain's side: the other brain's request, with the token, from `remote` (its address). */
export async function acceptPairing(deps: SyncPairingDeps, body: SyncPairAcceptBody, remote?: string): Promise<SyncPairResponse> {
  const { urls, ...request } = body;
  const req: SyncPairRequest = request;
  if (req.brain_id === deps.identity.brainId) throw badRequest('a brain cannot pair with itself', { brain_id: req.brain_id });
  const pinned = acceptPairRequest(req, deps.identity.brainId);
  if (pinned === null) throw new AppError('UNAUTHORIZED', 'the pairing proof does not verify with the public key sent', { proof: 'invalid' });
  const { deviceId, name } = await deps.claims.claim(req.token, 'brain', req.name ?? `brain ${req.brain_id.slice(0, 8)}`);
  const record = await deps.peers.pin({ brainId: pinned.brainId, publicKey: pinned.publicKey, name, deviceId, url: dialBackUrl(urls ?? [], remote) }, deps.now());
  deps.logger.info({ peer: record.brainId, device_id: deviceId, url: record.url }, 'peer brain paired (this brain minted the token)');
  return pairResponse(deps.identity, req, deviceId, nameOf(deps));
}

/** The completing brain's side: `svc sync pair <url>`. */
export async function completePairing(deps: SyncPairingDeps, body: SyncPairBody): Promise<PeerRecord> {
  let payload: PairPayload;
  try {
    payload = parsePairUrl(body.url);
  } catch (err) {
    if (err instanceof PairPayloadError) throw badRequest(`not a pair URL: ${err.message}`, { url: 'invalid' });
    throw err;
  }
  if (payload.kind !== 'brain') throw badRequest(`this pair URL is for a ${payload.kind}; on the other brain run \`svc pair --kind brain\``, { kind: payload.kind });
  if (payload.brain_id === deps.identity.brainId) throw badRequest('this pair URL was minted by this brain: run `svc sync pair` on the other brain', { brain_id: payload.brain_id });
  // Expiry is the minting brain's to judge (409 from it): this brain's clock may be off.
  if (payload.pin_required && body.pin === undefined) throw new AppError('UNAUTHORIZED', 'this pair URL needs the PIN shown on the other brain: pass --pin', { pin_required: true });
  const bases = [...payload.urls, ...(payload.mdns === null ? [] : [`http://${payload.mdns}`])];
  if (bases.length === 0) throw badRequest('the pair URL names no address of the other brain (it was minted in localhost mode?)', { urls: [] });
  const request = pairRequest(deps.identity, payload.token, nameOf(deps));
  const accept: SyncPairAcceptBody = { ...request, urls: deps.ownSyncUrls().slice(0, 8) };
  const unreachable: string[] = [];
  for (const base of bases) {
    const answer = await tryBase(deps, base, body.pin, payload.pin_required, accept);
    if (answer === null) {
      unreachable.push(base);
      continue;
    }
    const pinned = acceptPairResponse(answer, request, payload.brain_id);
    if (pinned === null) throw new AppError('PEER_REFUSED', `the brain at ${base} answered, but its answer does not prove it is ${payload.brain_id}`, { url: base }, 502);
    if (payload.key !== undefined && keyFingerprint(pinned.publicKey) !== payload.key) {
      throw new AppError('PEER_REFUSED', `the brain at ${base} answered with a sync key other than the one the pair URL names: not the brain that minted it`, { url: base }, 502);
    }
    const record = await deps.peers.pin({ brainId: pinned.brainId, publicKey: pinned.publicKey, name: answer.name, deviceId: null, url: body.sync_url ?? syncUrlOf(base) }, deps.now());
    deps.logger.info({ peer: record.brainId, url: record.url }, 'peer brain paired (this brain completed the pairing)');
    return record;
  }
  throw new AppError('PEER_UNREACHABLE', `no address of the other brain answered: ${unreachable.join(', ')}`, { urls: unreachable }, 502);
}

/** One address: the PIN first when there is one, then the request. Null when it cannot be reached; the other brain's refusal is thrown as its own. */
async function tryBase(deps: SyncPairingDeps, base: string, pin: string | undefined, pinRequired: boolean, accept: SyncPairAcceptBody): Promise<SyncPairResponse | null> {
  if (pin !== undefined && pinRequired) {
    const verified = await post(deps, base, '/api/devices/pair/verify_pin', { token: accept.token, pin });
    if (verified === null) return null;
    if (verified.status !== 200) throw relayed(verified, base);
  }
  const answer = await post(deps, base, '/api/sync/pair/accept', accept);
  if (answer === null) return null;
  // Something at this address that is not a brain with sync (no error envelope): try the next address.
  if (answer.status === 404 && typeof (answer.body as { error?: { code?: unknown } } | null)?.error?.code !== 'string') return null;
  if (answer.status !== 200 && answer.status !== 201) throw relayed(answer, base);
  answerCheck ??= TypeCompiler.Compile(SyncPairResponse);
  if (!answerCheck.Check(answer.body)) throw new AppError('PEER_REFUSED', `the brain at ${base} answered pairing with something that is not a pairing answer`, { url: base }, 502);
  return answer.body;
}

async function post(deps: SyncPairingDeps, base: string, path: string, body: unknown): Promise<{ status: number; body: unknown } | null> {
  let url: string;
  try {
    url = new URL(path, base).toString();
  } catch (err) {
    if (err instanceof TypeError) return null;
    throw err;
  }
  let response: Response;
  try {
    response = await (deps.fetch ?? fetch)(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(PAIR_REQUEST_TIMEOUT_MS) });
  } catch (err) {
    // Refused, unreachable, timed out: try the next address.
    deps.logger.info({ url, err: err instanceof Error ? err.message : String(err) }, 'pairing: an address of the other brain did not answer');
    return null;
  }
  const text = await readBounded(response, ANSWER_MAX_BYTES);
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
  }
  return { status: response.status, body: parsed };
}

/** At most `max` bytes of a body, as text; the rest is not read (the stream is cancelled). */
async function readBounded(response: Response, max: number): Promise<string> {
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= max) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** The other brain's refusal, passed on with its status and code (a PIN needed, a used token…). */
function relayed(answer: { status: number; body: unknown }, base: string): AppError {
  const error = (answer.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : 'PEER_REFUSED';
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${answer.status}`;
  const status = answer.status >= 400 && answer.status < 500 ? answer.status : 502;
  return new AppError(code, `the other brain (${base}) refused: ${message}`, error?.details ?? null, status);
}
