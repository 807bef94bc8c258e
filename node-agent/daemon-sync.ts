// The node-agent's side of daemon delivery (protocol/daemons.ts; docs/node-agent.md "Daemons"): after
// each node_ack, and every ten minutes while linked, ask the brain which daemon this node is to hold
// (GET /api/daemons/mine, with the node key). When its version differs from the one held, download the
// bundle (bounded in size and time), check its sha256 against the offer, extract it (daemon-store.ts)
// and report installed, or failed with the reason, through POST /api/daemons/mine/status; then the
// driver runner (daemon-runner.ts) starts it and its outcome (running or failed) is reported. An HTTP pull,
// so delivery works whatever the socket does; a brain without these routes (404) is noted once.
//
// One check runs at a time; a check asked for meanwhile runs once after it. A version that failed is
// not fetched again for RETRY_FAILED_MS (a link that flaps must not download a bad bundle on every
// ack). A report that could not be sent is sent again at the next check.
import { createHash } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { DAEMONS_BUNDLE_PATH, DAEMONS_MINE_PATH, DAEMONS_STATUS_PATH, MyDaemon, type DaemonOffer, type DaemonStatusBody } from '../protocol/daemons';
import type { AdapterLog } from './adapters/adapter';
import { BundleRefused, type HeldDaemon } from './daemon-store';
import { BrainUnreachable, ResponseTooLarge, type BrainHttp, type BrainRequest, type BrainResponse } from './daemon-http';

/** How often a linked node asks (docs/node-agent.md "Daemons"). */
export const POLL_MS = 10 * 60 * 1000;
export const RETRY_FAILED_MS = POLL_MS;
/** The largest bundle fetched (the registry's own bound is 16 MiB by default). */
export const MAX_BUNDLE_BYTES = 32 * 1024 * 1024;
const ASK_TIMEOUT_MS = 10_000;
const BUNDLE_TIMEOUT_MS = 60_000;
const MAX_ERROR_CHARS = 2000;
/** The most bytes of an offer or a report's answer. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** What happened to a held daemon after delivery: the driver runner (daemon-runner.ts) may say running or failed. */
export type DaemonOutcome = { state: 'installed' | 'running' } | { state: 'failed'; error: string };

export interface DaemonSyncOptions {
  nodeId: string;
  store: { held(): Promise<HeldDaemon | null>; install(offer: DaemonOffer, bytes: Uint8Array): Promise<HeldDaemon> };
  /** Requests to the brain with the node key (daemon-http.ts). */
  http: BrainHttp;
  log: AdapterLog;
  /** Whether the link is up (the ten-minute ask is skipped while it is not). */
  linked(): boolean;
  /** Called with the held daemon once per bundle (after delivery, or at the first check of a process that already holds it). */
  activate?(held: HeldDaemon): Promise<DaemonOutcome>;
  now?: () => number;
  maxBundleBytes?: number;
  pollMs?: number;
}

/** A failure to deliver, worded for the brain's admin. */
export class DeliveryError extends Error {}

export class DaemonSync {
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private noRoutes = false;
  private readonly failed = new Map<string, number>();
  /** The bundle (version and digest) activated in this process and its outcome. */
  private active: { bundle: string; outcome: DaemonOutcome } | null = null;
  private reported = '';
  /** Aborts the requests in flight at stop(). */
  private readonly stopping = new AbortController();

  constructor(private readonly o: DaemonSyncOptions) {}

  start(): void {
    this.timer ??= setInterval(() => {
      if (this.o.linked()) this.poke();
    }, this.o.pollMs ?? POLL_MS);
    this.timer.unref();
  }

  /** check() without waiting: what the link's ack and the timer call. A failure it does not expect is logged at error. */
  poke(): void {
    this.check().catch((err: unknown) => this.o.log.error({ err }, 'daemon delivery failed unexpectedly'));
  }

  /** No more asks; a request in flight is aborted and the check under way ends (a driver it is starting still starts: stop the runner after this). */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort(new DOMException('the node-agent is stopping', 'AbortError'));
    const running = this.running;
    // Its failure, if any, is logged by poke() or seen by the caller of check().
    if (running !== null) await running.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Asks the brain now (or once more after the check under way); resolves when that check ends. */
  check(): Promise<void> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => (this.running = null));
    return this.running;
  }

  private async loop(): Promise<void> {
    do {
      if (this.stopping.signal.aborted) return;
      this.again = false;
      try {
        await this.once();
      } catch (err) {
        // A brain that is down or answers oddly: the next ack or tick asks again. Programming errors still show.
        if (this.stopping.signal.aborted) return; // stop() aborted it: nothing to report
        if (!(err instanceof DeliveryError || err instanceof BrainUnreachable || err instanceof SyntaxError || (err instanceof DOMException && err.name === 'TimeoutError'))) throw err;
        this.o.log.warn({ err: err.message }, 'cannot ask the brain for this node\'s daemon');
      }
    } while (this.again);
  }

  private async once(): Promise<void> {
    const offer = await this.ask();
    if (offer === undefined) return;
    if (offer === null) return;
    const held = await this.o.store.held();
    if (held !== null && held.offer.version === offer.version && held.offer.sha256 === offer.sha256) return this.settle(held);
    // Another version is offered: the one held runs meanwhile (and goes on running if the new one is refused).
    if (held !== null) await this.activateOnce(held);
    const attempt = `${offer.version}\0${offer.sha256}`;
    const failedAt = this.failed.get(attempt);
    if (failedAt !== undefined && this.now() - failedAt < RETRY_FAILED_MS) return;
    let delivered: HeldDaemon;
    try {
      delivered = await this.deliver(offer);
    } catch (err) {
      if (this.stopping.signal.aborted) throw err;
      if (!(err instanceof DeliveryError || err instanceof BundleRefused || isErrno(err))) throw err;
      this.failed.set(attempt, this.now());
      this.o.log.error({ version: offer.version, err: err.message }, 'the daemon bundle was refused');
      await this.report({ version: offer.version, state: 'failed', error: err.message.slice(0, MAX_ERROR_CHARS) });
      return;
    }
    this.failed.delete(attempt);
    this.o.log.info({ version: offer.version, path: delivered.path }, `daemon ${offer.display_name} ${offer.version} delivered`);
    // Installed first, so the admin sees the delivery even when the driver then fails or hangs.
    await this.report({ version: offer.version, state: 'installed' });
    await this.settle(delivered);
  }

  /** The offer, null when no daemon is installed for this node, undefined when the brain has no delivery routes. */
  private async ask(): Promise<DaemonOffer | null | undefined> {
    const res = await this.request({ method: 'GET', path: DAEMONS_MINE_PATH, signal: AbortSignal.timeout(ASK_TIMEOUT_MS), maxBytes: MAX_ANSWER_BYTES });
    if (res.status === 404) {
      if (!this.noRoutes) this.o.log.info({}, 'the brain does not deliver daemons (no /api/daemons/mine)');
      this.noRoutes = true;
      return undefined;
    }
    if (res.status !== 200) throw new DeliveryError(`GET ${DAEMONS_MINE_PATH} answered HTTP ${res.status}`);
    const body: unknown = JSON.parse(Buffer.from(res.body).toString('utf8'));
    if (!Value.Check(MyDaemon, body)) throw new DeliveryError(`GET ${DAEMONS_MINE_PATH} answered something that is not an offer`);
    if (body.daemon !== null && body.daemon.node_id !== this.o.nodeId) throw new DeliveryError(`the brain offered the daemon of node ${body.daemon.node_id}, not ${this.o.nodeId}`);
    return body.daemon;
  }

  private async deliver(offer: DaemonOffer): Promise<HeldDaemon> {
    const max = this.o.maxBundleBytes ?? MAX_BUNDLE_BYTES;
    if (offer.size > max) throw new DeliveryError(`the bundle is ${offer.size} bytes; this node-agent takes at most ${max}`);
    let res: BrainResponse;
    try {
      res = await this.request({ method: 'GET', path: DAEMONS_BUNDLE_PATH, signal: AbortSignal.timeout(BUNDLE_TIMEOUT_MS), maxBytes: offer.size });
    } catch (err) {
      if (err instanceof ResponseTooLarge) throw new DeliveryError(`size mismatch: the bundle is larger than the ${offer.size} bytes the brain's offer names`);
      throw err;
    }
    if (res.status !== 200) throw new DeliveryError(`GET ${DAEMONS_BUNDLE_PATH} answered HTTP ${res.status}`);
    const bytes = res.body;
    const digest = createHash('sha256').update(bytes).digest('hex');
    if (digest !== offer.sha256) throw new DeliveryError(`sha256 mismatch: the bundle is ${digest}, the brain's offer names ${offer.sha256}`);
    return this.o.store.install(offer, bytes);
  }

  /** Activates a held daemon once per version, then reports how it stands. */
  private async settle(held: HeldDaemon): Promise<void> {
    const outcome = await this.activateOnce(held);
    await this.report({ version: held.offer.version, state: outcome.state, ...(outcome.state === 'failed' ? { error: outcome.error.slice(0, MAX_ERROR_CHARS) } : {}) });
  }

  private async activateOnce(held: HeldDaemon): Promise<DaemonOutcome> {
    const bundle = `${held.offer.version}\0${held.offer.sha256}`;
    if (this.active?.bundle !== bundle) {
      const outcome = this.o.activate ? await this.o.activate(held) : { state: 'installed' as const };
      this.active = { bundle, outcome };
    }
    return this.active.outcome;
  }

  /** Sends a report unless the same one was sent already. */
  private async report(body: DaemonStatusBody): Promise<void> {
    const key = JSON.stringify(body);
    if (key === this.reported) return;
    const res = await this.request({ method: 'POST', path: DAEMONS_STATUS_PATH, body: key, signal: AbortSignal.timeout(ASK_TIMEOUT_MS), maxBytes: MAX_ANSWER_BYTES });
    if (res.status !== 200) throw new DeliveryError(`POST ${DAEMONS_STATUS_PATH} answered HTTP ${res.status}`);
    this.reported = key;
  }

  /** A request that stop() aborts too. */
  private request(req: BrainRequest): Promise<BrainResponse> {
    return this.o.http({ ...req, signal: AbortSignal.any([req.signal, this.stopping.signal]) });
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }
}

/** A file system failure writing the daemon (no space, no permission): the node reports it as failed. */
const isErrno = (err: unknown): err is NodeJS.ErrnoException => err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
