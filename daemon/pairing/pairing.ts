// Pairing (spec 4.6, 5.4; docs/pairing.md): minting single-use pairing tokens (optionally with a PIN),
// the pair URL a QR code carries, checking and claiming tokens for a device credential, the paired
// list, prune, revoke and session handoff. Every decision about a token is taken inside one store write
// transaction that reads the row first (pairing-store.ts), and refusals are thrown after it commits, so
// a wrong PIN's count survives the refusal and two racing claims end with exactly one credential.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AccessMode, BrainEvent } from '../kernel/events';
import type { EventBus } from '../kernel/event-bus';
import type { CapabilityContext, Clock } from '../kernel/capability';
import type { ClientConnections } from '../kernel/ports';
import { AppError, badRequest, notFound } from '../kernel/errors';
import { newDeviceKey, newPairToken, secretHash } from '../../mesh/pair-token';
import { encodePairUrl, PAIR_URL_VERSION, type PairPayload } from '../../mesh/pair-payload';
import { PAIR_TTL, type CompletePairResponse, type MintedPair, type PairCheckResponse, type PairedList, type PairKind, type PairUrlResponse } from '../../protocol/pairing';
import { activeDevice, activeDevices, endToken, insertDevice, insertToken, revokeDevice, tokenByHash, tokenById, unclaimedTokens, type DeviceRow, type TokenRow } from './pairing-store';
import { claimRefusal, pinRequired, stateOf } from './token-state';
import { hashPin, MAX_PIN_FAILURES, newPin, PIN_RE, pinMatches } from './pin';
import { devicePrincipalId, type DeviceCredentials } from './device-credentials';
import { CLOSE_CODES } from '../../protocol/session';

/** Where other devices can reach the brain, as the access and mDNS capabilities announce it. */
export interface Reachability {
  mode: AccessMode;
  urls: string[];
  /** `<name>.local:<port>` while the brain advertises over mDNS. */
  mdns: string | null;
}

export interface MintInput {
  kind?: PairKind | undefined;
  name?: string | undefined;
  node_id?: string | undefined;
  /** true: the brain chooses a 6-digit PIN; a string: that PIN (4–8 digits). */
  pin?: boolean | string | undefined;
  ttl_seconds?: number | undefined;
}

export interface PairingDeps {
  store: CapabilityContext['store'];
  clock: Clock;
  credentials: DeviceCredentials;
  connections: ClientConnections;
  /** Where a revoke is announced (device_revoked), for sockets the connections port does not hold (/v1/node). */
  bus: Pick<EventBus<BrainEvent>, 'emit'>;
  reach: () => Reachability;
  /** The brain's stable id (mesh/brain-id.ts), named in the pair URL and the completed pairing. */
  brainId: () => string;
  /** The fingerprint of the brain's sync key, for a pair URL of kind brain; null when it has none (sync off). */
  syncKey?: () => string | null;
  logger: Logger;
}

/** Who asks for a handoff: the admin, or a paired device (which may hand off only its own session). */
export type HandoffCaller = { kind: 'admin' } | { kind: 'device'; id: string };

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('base64url')}`;
const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

export class Pairing {
  constructor(private readonly deps: PairingDeps) {}

  /** Loads the live device keys into the credential store (after the migrations ran). */
  start(): void {
    for (const d of activeDevices(this.deps.store)) this.deps.credentials.add(d.key_hash, d.kind, d.device_id, d.node_id);
    this.deps.logger.debug({ devices: this.deps.credentials.size }, 'paired devices loaded');
  }

  brainId(): string {
    return this.deps.brainId();
  }

  private now(): number {
    return round(this.deps.clock.now() / 1000);
  }

  async mint(input: MintInput): Promise<MintedPair> {
    const kind = input.kind ?? 'phone';
    if (input.node_id !== undefined && kind !== 'node') throw badRequest('node_id is for kind node only', { field: 'node_id', kind });
    const chosen = input.pin === true ? newPin() : typeof input.pin === 'string' ? input.pin : undefined;
    if (chosen !== undefined && !PIN_RE.test(chosen)) throw badRequest('a PIN is 4 to 8 digits', { field: 'pin' });
    const pin = chosen === undefined ? null : hashPin(chosen);
    const token = newPairToken();
    const created = this.now();
    const row: TokenRow = {
      pair_id: newId('pair'),
      token_hash: secretHash(token),
      kind,
      name: input.name ?? null,
      node_id: input.node_id ?? null,
      pin_salt: pin?.salt ?? null,
      pin_hash: pin?.hash ?? null,
      pin_verified: 0,
      pin_failures: 0,
      state: 'unclaimed',
      created_at: created,
      expires_at: created + (input.ttl_seconds ?? PAIR_TTL.default),
      device_id: null,
    };
    await this.deps.store.write((db) => insertToken(db, row));
    this.deps.logger.info({ pair_id: row.pair_id, kind, pin: pin !== null, expires_at: row.expires_at }, 'pairing token minted');
    return {
      pair_id: row.pair_id,
      token,
      kind,
      name: row.name,
      node_id: row.node_id,
      pin_required: pin !== null,
      ...(input.pin === true ? { pin: chosen! } : {}),
      created_at: row.created_at,
      expires_at: row.expires_at,
    };
  }

  /** Mints a token and the pair URL carrying it; 409 while the brain is reachable from loopback only. */
  async pairUrl(input: MintInput): Promise<PairUrlResponse> {
    const reach = this.deps.reach();
    if (reach.mode === 'localhost' || (reach.urls.length === 0 && reach.mdns === null)) {
      throw new AppError('CONFLICT', 'the brain listens on loopback only, so no other device can reach it: run `svc access lan` (or `svc access remote-up`) first', {
        mode: reach.mode,
        command: 'svc access lan',
      });
    }
    const minted = await this.mint(input);
    const payload: PairPayload = {
      v: PAIR_URL_VERSION,
      kind: minted.kind,
      brain_id: this.brainId(),
      token: minted.token,
      expires_at: Math.floor(minted.expires_at),
      pin_required: minted.pin_required,
      urls: reach.urls,
      mdns: reach.mdns,
    };
    const key = minted.kind === 'brain' ? (this.deps.syncKey?.() ?? null) : null;
    if (key !== null) payload.key = key;
    return { url: encodePairUrl(payload), payload, pair_id: minted.pair_id, ...(minted.pin === undefined ? {} : { pin: minted.pin }) };
  }

  private known(token: string): TokenRow {
    const row = tokenByHash(this.deps.store, secretHash(token));
    if (!row) throw new AppError('NOT_FOUND', 'unknown pairing token', { token: 'unknown' });
    return row;
  }

  check(token: string): PairCheckResponse {
    const row = this.known(token);
    return { state: stateOf(row, this.now()), kind: row.kind, pin_required: pinRequired(row), pin_verified: row.pin_verified === 1, expires_at: row.expires_at };
  }

  /** Checks a PIN; the MAX_PIN_FAILURES-th wrong one revokes the token. */
  async verifyPin(token: string, pin: string): Promise<void> {
    const hash = secretHash(token);
    const now = this.now();
    const outcome = await this.deps.store.write((db): AppError | null => {
      const row = tokenByHash(db, hash);
      if (!row) return new AppError('NOT_FOUND', 'unknown pairing token', { token: 'unknown' });
      const state = stateOf(row, now);
      if (state !== 'unclaimed') return notUnclaimed(state);
      if (row.pin_hash === null || row.pin_salt === null) return badRequest('this pairing token needs no PIN', { pin_required: false });
      if (PIN_RE.test(pin) && pinMatches(pin, row.pin_salt, row.pin_hash)) {
        db.run('UPDATE pair_tokens SET pin_verified = 1 WHERE pair_id = ?', [row.pair_id]);
        return null;
      }
      const failures = row.pin_failures + 1;
      db.run('UPDATE pair_tokens SET pin_failures = ? WHERE pair_id = ?', [failures, row.pair_id]);
      if (failures >= MAX_PIN_FAILURES) endToken(db, row.pair_id, 'revoked', now);
      const left = Math.max(0, MAX_PIN_FAILURES - failures);
      return new AppError('UNAUTHORIZED', left === 0 ? `wrong PIN; that was the ${MAX_PIN_FAILURES}th, so the pairing token is revoked: mint a new one` : 'wrong PIN', {
        attempts_left: left,
        state: left === 0 ? 'revoked' : 'unclaimed',
      });
    });
    if (outcome) {
      if (outcome.code === 'UNAUTHORIZED') this.deps.logger.warn({ attempts_left: (outcome.details as { attempts_left: number }).attempts_left }, 'wrong pairing PIN');
      throw outcome;
    }
  }

  /** Claims a token for a new device credential (exactly once per token). */
  async complete(body: { token: string; name?: string | undefined; node_id?: string | undefined; platform?: string | undefined }, expectKind?: PairKind, tokenNameFirst = false): Promise<CompletePairResponse> {
    const hash = secretHash(body.token);
    const now = this.now();
    const key = newDeviceKey();
    const result = await this.deps.store.write((db): DeviceRow | AppError => {
      const row = tokenByHash(db, hash);
      if (!row) return new AppError('NOT_FOUND', 'unknown pairing token', { token: 'unknown' });
      const refusal = claimRefusal(row, now);
      if (refusal?.reason === 'not_unclaimed') return notUnclaimed(refusal.state);
      if (refusal?.reason === 'pin_unverified') return new AppError('UNAUTHORIZED', 'this pairing token requires a PIN: verify it first (POST /api/devices/pair/verify_pin)', { pin_required: true });
      // A token minted for another kind of device is refused without being used up.
      if (expectKind !== undefined && row.kind !== expectKind) return badRequest(`this pairing token is for a ${row.kind}, not a ${expectKind}`, { kind: row.kind });
      const nodeId = row.kind === 'node' ? (row.node_id ?? body.node_id ?? null) : null;
      const conflict = nodeId === null ? undefined : nodeDevice(db, nodeId);
      if (conflict) return alreadyPaired(conflict);
      const device: DeviceRow = {
        device_id: newId('dev'),
        kind: row.kind,
        name: (tokenNameFirst ? (row.name ?? body.name) : (body.name ?? row.name)) ?? `${row.kind} ${nodeId ?? now.toFixed(0)}`,
        node_id: nodeId,
        platform: body.platform ?? null,
        key_hash: secretHash(key),
        pair_id: row.pair_id,
        paired_at: now,
      };
      if (!endToken(db, row.pair_id, 'claimed', now, device.device_id)) return notUnclaimed('claimed');
      insertDevice(db, device);
      return device;
    });
    if (result instanceof AppError) throw result;
    this.deps.credentials.add(result.key_hash, result.kind, result.device_id, result.node_id);
    this.deps.logger.info({ device_id: result.device_id, kind: result.kind, pair_id: result.pair_id }, 'device paired');
    return { device_id: result.device_id, kind: result.kind, name: result.name, node_id: result.node_id, device_key: key, brain_id: this.brainId() };
  }

  /** Pairs a node that announced a code the person claimed (code-pairing.ts): its node key. */
  async pairNode(nodeId: string, name: string | null): Promise<{ device: DeviceRow; key: string }> {
    const key = newDeviceKey();
    const now = this.now();
    const device: DeviceRow = { device_id: newId('dev'), kind: 'node', name: name ?? nodeId, node_id: nodeId, platform: null, key_hash: secretHash(key), pair_id: null, paired_at: now };
    const conflict = await this.deps.store.write((db) => {
      const existing = nodeDevice(db, nodeId);
      if (existing) return alreadyPaired(existing);
      insertDevice(db, device);
      return null;
    });
    if (conflict) throw conflict;
    this.deps.credentials.add(device.key_hash, 'node', device.device_id, device.node_id);
    this.deps.logger.info({ device_id: device.device_id, node_id: nodeId }, 'node paired by code');
    return { device, key };
  }

  list(includeUnclaimed: boolean): PairedList {
    const open = new Map<string, number>();
    for (const c of this.deps.connections.list()) open.set(c.principal, (open.get(c.principal) ?? 0) + 1);
    const devices = activeDevices(this.deps.store).map((d) => ({
      device_id: d.device_id,
      kind: d.kind,
      name: d.name,
      node_id: d.node_id,
      platform: d.platform,
      paired_at: d.paired_at,
      pair_id: d.pair_id,
      connections: open.get(devicePrincipalId(d.kind, d.device_id)) ?? 0,
    }));
    if (!includeUnclaimed) return { count: devices.length, devices };
    const now = this.now();
    const unclaimed = unclaimedTokens(this.deps.store).map((t) => ({
      pair_id: t.pair_id,
      kind: t.kind,
      name: t.name,
      state: stateOf(t, now),
      pin_required: pinRequired(t),
      created_at: t.created_at,
      expires_at: t.expires_at,
    }));
    return { count: devices.length, devices, unclaimed };
  }

  /** Revokes every unclaimed token (expired ones included), or only those older than `olderThanSeconds`. */
  async prune(olderThanSeconds?: number): Promise<{ revoked: number; pair_ids: string[] }> {
    const now = this.now();
    const before = olderThanSeconds === undefined ? Infinity : now - olderThanSeconds;
    const pairIds = await this.deps.store.write((db) => unclaimedTokens(db).filter((t) => t.created_at <= before && endToken(db, t.pair_id, 'revoked', now)).map((t) => t.pair_id));
    if (pairIds.length > 0) this.deps.logger.info({ revoked: pairIds.length }, 'unclaimed pairing tokens pruned');
    return { revoked: pairIds.length, pair_ids: pairIds };
  }

  /** Revokes a paired device (its key fails at once, its sockets close) or an unclaimed token (`pair_…`). */
  async revoke(id: string): Promise<{ id: string; revoked: true; connections_closed: number }> {
    const now = this.now();
    if (id.startsWith('pair_')) {
      const row = tokenById(this.deps.store, id);
      if (!row) throw notFound('pairing token', id);
      // An expired token stays expired (final); prune is what sweeps them.
      if (stateOf(row, now) !== 'unclaimed' || !(await this.deps.store.write((db) => endToken(db, id, 'revoked', now)))) throw notUnclaimed(stateOf(tokenById(this.deps.store, id) ?? row, now));
      this.deps.logger.info({ pair_id: id }, 'pairing token revoked');
      return { id, revoked: true, connections_closed: 0 };
    }
    const device = activeDevice(this.deps.store, id);
    if (!device || !(await this.deps.store.write((db) => revokeDevice(db, id, now)))) throw notFound('device', id);
    this.deps.credentials.remove(id);
    const closed = this.deps.connections.close(devicePrincipalId(device.kind, id), CLOSE_CODES.revoked, 'device revoked');
    this.deps.bus.emit({ type: 'device_revoked', kind: device.kind, deviceId: id, nodeId: device.kind === 'node' ? (device.node_id ?? id) : null, at: this.deps.clock.now() });
    this.deps.logger.info({ device_id: id, kind: device.kind, connections_closed: closed }, 'device revoked');
    return { id, revoked: true, connections_closed: closed };
  }

  /** Moves a live session from one paired phone/browser to another (docs/pairing.md "Handoff"). */
  handoff(body: { session_id: string; from_device_id: string; to_device_id: string }, caller: HandoffCaller): { session_id: string; attached: number; detached: number } {
    if (caller.kind === 'device' && caller.id !== body.from_device_id) {
      throw new AppError('FORBIDDEN', 'a device may hand off only its own session (from_device_id is the caller)', { caller: caller.id });
    }
    if (body.from_device_id === body.to_device_id) throw badRequest('from_device_id and to_device_id are the same device');
    const from = this.sessionDevice(body.from_device_id, 'from_device_id');
    const to = this.sessionDevice(body.to_device_id, 'to_device_id');
    const moved = this.deps.connections.handoff(body.session_id, devicePrincipalId(from.kind, from.device_id), devicePrincipalId(to.kind, to.device_id));
    this.deps.logger.info({ session_id: body.session_id, from: from.device_id, to: to.device_id, ...moved }, 'session handed off');
    return { session_id: body.session_id, ...moved };
  }

  private sessionDevice(id: string, field: string): DeviceRow {
    const device = activeDevice(this.deps.store, id);
    if (!device) throw notFound('device', id);
    if (device.kind !== 'phone' && device.kind !== 'browser') throw badRequest(`${field} is a ${device.kind}: only phones and browsers hold /v1/session sessions`, { field, kind: device.kind });
    return device;
  }
}

const notUnclaimed = (state: string): AppError =>
  new AppError('CONFLICT', state === 'claimed' ? 'this pairing token was already claimed: a token yields one credential only' : `this pairing token is ${state}: mint a new one`, { state });

const nodeDevice = (db: CapabilityContext['store'] | Parameters<typeof insertDevice>[0], nodeId: string): DeviceRow | undefined =>
  activeDevices(db).find((d) => d.kind === 'node' && d.node_id === nodeId);

const alreadyPaired = (d: DeviceRow): AppError =>
  new AppError('CONFLICT', `node ${d.node_id ?? ''} is already paired as ${d.device_id}; revoke it first to pair it again`, { device_id: d.device_id, command: `svc pair revoke ${d.device_id}` });
