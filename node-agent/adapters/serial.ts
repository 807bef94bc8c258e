// A device on a serial port (docs/node-agent.md "Serial devices"): opens `path` at `baud`, frames the
// byte stream into lines, and speaks either JSON lines or the line protocol the config declares
// (line-protocol.ts). The port is behind SerialOpener (STYLE.md 6): run-command.ts passes the real
// `serialport` binding, loaded with import() only when a serial device is configured, so the brain's
// bundle never reaches it.
//   - The port disappearing (USB unplug; a pty whose other end closed) closes the link: pending
//     actions fail with "device unavailable", the status turns 'connecting', and the port is reopened
//     with backoff (250 ms doubling to 10 s, jitter) until it is back or stop() is called.
//   - Actions run one at a time in arrival order: a line protocol has no request ids, so the first
//     line matching the running command's reply or error pattern is its answer. Other lines go
//     through the telemetry parsers.
import { stat } from 'node:fs/promises';
import type { SerialPort } from 'serialport';
import type { DeviceManifest } from '../../protocol/node';
import { normalizeAction } from '../../protocol/node';
import type { SerialDevice } from '../config';
import { AdapterError, DEVICE_UNAVAILABLE, type AdapterLog, type AdapterSink, type AdapterState, type AdapterStatus, type DeviceAdapter } from './adapter';
import { jsonLine, jsonLineCommand, type JsonLineReply } from './json-lines';
import { LineProtocol, LineSplitter, type CompiledCommand, type ReplyMatch } from './line-protocol';

/** An open port, as the adapter needs it. */
export interface SerialLink {
  onData(fn: (chunk: Buffer) => void): void;
  /** Called once when the port closes for any reason (the error says why, null after close()). */
  onClose(fn: (err: Error | null) => void): void;
  write(text: string): Promise<void>;
  close(): Promise<void>;
}
export type SerialOpener = (path: string, baud: number) => Promise<SerialLink>;

export interface SerialAdapterDeps {
  open: SerialOpener;
  log: AdapterLog;
  random?: () => number;
  /** Reconnect backoff bounds (ms). */
  retryMinMs?: number;
  retryMaxMs?: number;
}

/** The manifest a device config declares. */
export function deviceManifest(device: { id: string; name: string; type: string; manufacturer?: string | undefined; model?: string | undefined; firmware_version?: string | undefined; capabilities?: string[] | undefined; actions: DeviceManifest['actions'] }, transport: Record<string, unknown> & { kind: 'serial' | 'ble' }): DeviceManifest {
  return {
    device_id: device.id,
    device_type: device.type,
    name: device.name,
    ...(device.manufacturer !== undefined ? { manufacturer: device.manufacturer } : {}),
    ...(device.model !== undefined ? { model: device.model } : {}),
    ...(device.firmware_version !== undefined ? { firmware_version: device.firmware_version } : {}),
    transport,
    capabilities: device.capabilities ?? [],
    actions: device.actions,
  };
}

interface Pending {
  readonly action: string;
  readonly params: Record<string, unknown>;
  readonly signal: AbortSignal;
  resolve(result: Record<string, unknown>): void;
  reject(err: AdapterError): void;
}

/** What is waiting for a reply line right now. */
interface InFlight {
  /** Whether `line` answers it (null: it does not). */
  answers(line: string): ReplyMatch | null;
  settle(match: ReplyMatch): void;
}

export class SerialAdapter implements DeviceAdapter {
  readonly manifest: DeviceManifest;
  private readonly protocol: LineProtocol | null;
  private readonly defaults = new Map<string, Record<string, unknown>>();
  private readonly splitter = new LineSplitter();
  private sink: AdapterSink | null = null;
  private link: SerialLink | null = null;
  private state: AdapterStatus = { state: 'unavailable', detail: 'not started' };
  private stopped = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly queue: Pending[] = [];
  private inFlight: InFlight | null = null;
  private nextId = 1;
  private unmatched = 0;

  constructor(
    private readonly config: SerialDevice,
    private readonly deps: SerialAdapterDeps,
  ) {
    this.manifest = deviceManifest(config, { kind: 'serial', path: config.path, baud: config.baud });
    this.protocol = config.framing === 'json-lines' ? null : LineProtocol.compile(config.framing);
    for (const a of config.actions) {
      const action = normalizeAction(a);
      if (action !== null) this.defaults.set(action.name, Object.fromEntries(action.params.filter((p) => p.default !== undefined).map((p) => [p.name, p.default])));
    }
  }

  start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    this.stopped = false;
    void this.connect();
    return Promise.resolve();
  }

  status(): AdapterStatus {
    return { ...this.state };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.failAll('the node-agent is stopping');
    const link = this.link;
    this.link = null;
    if (link !== null) await link.close();
    this.setState('unavailable', 'stopped');
  }

  run(action: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (!this.defaults.has(action)) return Promise.reject(new AdapterError(`${this.config.id} has no action ${action}`));
    if (this.link === null) return Promise.reject(new AdapterError(`${DEVICE_UNAVAILABLE} (${this.state.detail})`));
    if (signal.aborted) return Promise.reject(new AdapterError(abortMessage(signal)));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        // Queued: it never reaches the device. In flight: execute() settles it.
        const i = this.queue.indexOf(entry);
        if (i < 0) return;
        this.queue.splice(i, 1);
        entry.reject(new AdapterError(abortMessage(signal)));
      };
      const entry: Pending = {
        action,
        params,
        signal,
        resolve: (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(entry);
      this.pump();
    });
  }

  // ── the port ───────────────────────────────────────────────────────────────────────────────────
  private async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.stopped) return;
    this.setState('connecting', `opening ${this.config.path}`);
    let link: SerialLink;
    try {
      link = await this.deps.open(this.config.path, this.config.baud);
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      this.scheduleRetry(err.message);
      return;
    }
    if (this.stopped) {
      await link.close();
      return;
    }
    this.link = link;
    this.attempt = 0;
    this.splitter.reset();
    link.onData((chunk) => this.onData(chunk));
    link.onClose((err) => this.onClose(link, err));
    this.setState('connected', `open ${this.config.path} at ${this.config.baud}`);
  }

  private onClose(link: SerialLink, err: Error | null): void {
    if (this.link !== link) return;
    this.link = null;
    this.failAll(`${DEVICE_UNAVAILABLE} (the port closed)`);
    if (this.stopped) return;
    this.deps.log.warn({ device: this.config.id, err: err?.message }, `${this.config.path} closed; reopening`);
    this.scheduleRetry(err?.message ?? 'closed');
  }

  private scheduleRetry(reason: string): void {
    const min = this.deps.retryMinMs ?? 250;
    const max = this.deps.retryMaxMs ?? 10_000;
    const base = Math.min(max, min * 2 ** Math.min(this.attempt, 20));
    const delay = Math.round(base / 2 + (this.deps.random ?? Math.random)() * (base / 2));
    this.attempt++;
    this.setState('connecting', `${this.config.path}: ${reason}; retrying in ${(delay / 1000).toFixed(1)} s`);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private setState(state: AdapterState, detail: string): void {
    const changed = state !== this.state.state;
    this.state = { state, detail };
    if (changed) {
      this.deps.log.info({ device: this.config.id, state, detail }, `${this.config.id}: ${state}`);
      this.sink?.status(state, detail);
    }
  }

  // ── lines in ───────────────────────────────────────────────────────────────────────────────────
  private onData(chunk: Buffer): void {
    const before = this.splitter.dropped;
    for (const line of this.splitter.push(chunk.toString('utf8'))) this.onLine(line);
    if (this.splitter.dropped > before) this.deps.log.warn({ device: this.config.id, dropped: this.splitter.dropped }, 'dropped an overlong line (wrong baud rate?)');
  }

  private onLine(line: string): void {
    const answer = this.inFlight?.answers(line) ?? null;
    if (answer !== null) {
      this.inFlight!.settle(answer);
      return;
    }
    const reading = this.protocol !== null ? this.protocol.telemetry(line) : jsonTelemetry(line);
    if (reading !== null) {
      this.sink?.reading(reading.event, reading.data);
      return;
    }
    this.unmatched++;
    // Logged sparingly: a chatty device must not fill the journal.
    if ((this.unmatched & (this.unmatched - 1)) === 0) this.deps.log.debug({ device: this.config.id, line: line.slice(0, 200), unmatched: this.unmatched }, 'a line no parser matched');
  }

  // ── commands out ───────────────────────────────────────────────────────────────────────────────
  private pump(): void {
    if (this.inFlight !== null || this.link === null) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    void this.execute(this.link, next).finally(() => {
      this.inFlight = null;
      this.pump();
    });
  }

  private async execute(link: SerialLink, p: Pending): Promise<void> {
    const params = { ...this.defaults.get(p.action), ...p.params };
    let text: string;
    let answers: InFlight['answers'] | null;
    if (this.protocol === null) {
      const id = this.nextId++;
      text = jsonLineCommand(id, p.action, params);
      answers = (line) => replyMatch(jsonLine(line), id);
    } else {
      const rendered = this.protocol.render(p.action, params);
      if ('problem' in rendered) return p.reject(new AdapterError(rendered.problem));
      text = rendered.line;
      const command: CompiledCommand = this.protocol.command(p.action)!;
      answers = command.reply === null && command.error === null ? null : (line) => LineProtocol.reply(command, line);
    }
    const settled = new Promise<ReplyMatch>((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, error: `the device did not answer within ${this.config.reply_timeout_ms} ms` }), this.config.reply_timeout_ms);
      const abort = (): void => resolve({ ok: false, error: abortMessage(p.signal) });
      p.signal.addEventListener('abort', abort, { once: true });
      this.inFlight = {
        answers: answers ?? (() => null),
        settle: (m) => {
          clearTimeout(timer);
          p.signal.removeEventListener('abort', abort);
          resolve(m);
        },
      };
      if (answers === null) this.inFlight.settle({ ok: true, result: {} });
    });
    try {
      await link.write(text);
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      this.inFlight?.settle({ ok: false, error: `${DEVICE_UNAVAILABLE} (${err.message})` });
    }
    const outcome = await settled;
    if (outcome.ok) p.resolve(outcome.result);
    else p.reject(new AdapterError(outcome.error));
  }

  private failAll(message: string): void {
    this.inFlight?.settle({ ok: false, error: message });
    for (const p of this.queue.splice(0)) p.reject(new AdapterError(message));
  }
}

function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name === 'TimeoutError' ? 'timed out' : `cancelled${reason instanceof Error ? ` (${reason.message})` : ''}`;
}

function replyMatch(parsed: ReturnType<typeof jsonLine>, id: number): ReplyMatch | null {
  if (parsed?.kind !== 'reply' || parsed.reply.id !== id) return null;
  const r: JsonLineReply = parsed.reply;
  return r.ok ? { ok: true, result: r.result ?? {} } : { ok: false, error: r.error ?? 'the device refused the action' };
}

function jsonTelemetry(line: string): { event: string; data: Record<string, unknown> } | null {
  const parsed = jsonLine(line);
  return parsed?.kind === 'event' ? { event: parsed.event, data: parsed.data } : null;
}

/** How often an open port's path is checked for presence (see serialportOpener). */
export const PRESENCE_MS = 250;

/**
 * The real port: the `serialport` package, loaded on first use (run-command.ts; never in the brain).
 * serialport notices a vanished device only when a read fails with EBADF or ENXIO; a tty whose other
 * side hung up can instead read 0 bytes forever, which its binding retries at once (a busy loop, and
 * no 'close'). So while a port is open its path is checked every PRESENCE_MS: when the device node (or
 * the /dev/serial/by-id link) is gone or names another device, the port is closed here, which ends
 * that loop and reports the port gone.
 */
export async function serialportOpener(log: AdapterLog): Promise<SerialOpener> {
  const { SerialPort } = await import('serialport');
  return (path, baudRate) =>
    new Promise((resolve, reject) => {
      const port = new SerialPort({ path, baudRate, autoOpen: false });
      port.open((err) => {
        if (err) return reject(err);
        void stat(path).then(
          (opened) => resolve(watchPort(port, path, opened.rdev, log)),
          (e: unknown) => {
            port.close(() => reject(e instanceof Error ? e : new Error(String(e))));
          },
        );
      });
    });
}

function watchPort(port: SerialPort, path: string, rdev: number, log: AdapterLog): SerialLink {
  let closed = false;
  let gone: Error | null = null;
  const closeListeners: ((err: Error | null) => void)[] = [];
  const presence = setInterval(() => {
    void stat(path).then(
      (now) => now.rdev !== rdev && vanished(`${path} now names another device`),
      (e: NodeJS.ErrnoException) => vanished(`${path} is gone (${e.code ?? e.message})`),
    );
  }, PRESENCE_MS);
  const vanished = (why: string): void => {
    if (closed || gone !== null) return;
    gone = new Error(why);
    port.close((e) => e && log.debug({ path, err: e.message }, 'closing a vanished serial port'));
  };
  // 'error' after open is followed by 'close' when the port is gone; listening keeps it from throwing.
  port.on('error', (e: Error) => log.warn({ path, err: e.message }, 'serial port error'));
  port.on('close', (e: Error | null) => {
    closed = true;
    clearInterval(presence);
    for (const fn of closeListeners) fn(gone ?? e ?? null);
  });
  return {
    onData: (fn) => void port.on('data', fn),
    onClose: (fn) => void closeListeners.push(fn),
    write: (text) => new Promise<void>((ok, fail) => port.write(text, (e) => (e ? fail(e) : ok()))),
    close: () =>
      closed
        ? Promise.resolve()
        : new Promise<void>((ok) =>
            port.close((e) => {
              // Closing a port that vanished meanwhile fails; it is closed either way.
              if (e) log.debug({ path, err: e.message }, 'closing the serial port');
              ok();
            }),
          ),
  };
}
