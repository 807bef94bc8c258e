// Pairing a node by a 6-digit code (node-protocol.md "Pairing a node"; docs/pairing.md "A board"):
// the node announces the code it shows, the person claims it in the brain, the node's next status poll
// gets its node key. Codes live 10 minutes, in memory only (a node whose code a restart forgot simply
// announces again); at most MAX_PENDING at a time, since announcing needs no credential. Wrong claims
// are counted per caller: the 6th within 15 minutes is a 429 with Retry-After.
import { AppError, notFound } from '../kernel/errors';
import type { Clock } from '../kernel/capability';
import { parsePairCode, type PairCode } from '../../mesh/pair-code';
import type { CodeClaimResponse, CodeStatusResponse } from '../../protocol/pairing';
import { AttemptLimiter } from './rate-limit';
import type { Pairing } from './pairing';

export const CODE_TTL_MS = 10 * 60_000;
export const MAX_PENDING = 256;
export const WRONG_CLAIMS = { max: 5, windowMs: 15 * 60_000 } as const;

interface PendingCode {
  code: PairCode;
  nodeId: string;
  name: string | null;
  expiresAt: number;
  /** Set once claimed: the node key the node's polls are answered with until the code expires. */
  paired?: { deviceId: string; key: string };
}

/** A 429 carrying how long to wait; the route sets Retry-After from it. */
export class RetryLater extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message, { retry_after_seconds: retryAfterSeconds });
  }
}

export class CodePairing {
  private readonly codes = new Map<PairCode, PendingCode>();
  private readonly wrong: AttemptLimiter;

  constructor(
    private readonly pairing: Pick<Pairing, 'pairNode'>,
    private readonly clock: Clock,
  ) {
    this.wrong = new AttemptLimiter(WRONG_CLAIMS, clock);
  }

  announce(input: { code: string; node_id: string; name?: string | undefined }): { status: 'pending'; expires_at: number } {
    const code = this.parse(input.code);
    this.sweep();
    const existing = this.codes.get(code);
    if (existing && existing.nodeId !== input.node_id) throw new AppError('CONFLICT', 'another node announced this code: show a new one', { code: 'taken' });
    if (existing?.paired) return { status: 'pending', expires_at: existing.expiresAt / 1000 };
    if (!existing && this.codes.size >= MAX_PENDING) throw new RetryLater('too many codes are waiting to be claimed; try again in a minute', 60);
    const entry: PendingCode = { code, nodeId: input.node_id, name: input.name ?? null, expiresAt: this.clock.now() + CODE_TTL_MS };
    this.codes.set(code, entry);
    return { status: 'pending', expires_at: entry.expiresAt / 1000 };
  }

  status(input: { code: string; node_id: string }): CodeStatusResponse {
    const entry = this.codes.get(this.parse(input.code));
    if (!entry || entry.nodeId !== input.node_id) throw notFound('code', input.code);
    const expires_at = entry.expiresAt / 1000;
    if (this.clock.now() >= entry.expiresAt) return { status: 'expired', expires_at };
    if (entry.paired) return { status: 'paired', token: entry.paired.key, device_id: entry.paired.deviceId, expires_at };
    return { status: 'pending', expires_at };
  }

  /** Claims a code for the caller (the person, with the API token); `caller` keys the wrong-claim limit. */
  async claim(input: { code: string }, caller: string): Promise<CodeClaimResponse> {
    const wait = this.wrong.retryAfterMs(caller);
    if (wait > 0) throw new RetryLater(`too many wrong codes: wait ${Math.ceil(wait / 1000)} s`, Math.ceil(wait / 1000));
    const code = parsePairCode(input.code);
    const entry = code === undefined ? undefined : this.codes.get(code);
    if (!entry || this.clock.now() >= entry.expiresAt) {
      this.wrong.record(caller);
      throw new AppError('NOT_FOUND', 'no node is showing this code (check the digits, or have the node show a new one)', { code: 'unknown' });
    }
    if (entry.paired) throw new AppError('CONFLICT', 'this code was already claimed', { device_id: entry.paired.deviceId });
    const { device, key } = await this.pairing.pairNode(entry.nodeId, entry.name);
    entry.paired = { deviceId: device.device_id, key };
    return { device_id: device.device_id, node_id: entry.nodeId, name: device.name, kind: 'node' };
  }

  private parse(input: string): PairCode {
    const code = parsePairCode(input);
    if (code === undefined) throw new AppError('BAD_REQUEST', 'a code is six digits ("NNN NNN")', { field: 'code' });
    return code;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [code, entry] of this.codes) if (now >= entry.expiresAt) this.codes.delete(code);
  }
}
