// Log lines for refused requests (4xx, and malformed requests the server answers itself), compact
// and rate-limited: a hostile or broken client can send thousands of bad requests a minute, and
// journald on an SD card should not carry each one. Each kind (status + code) may log `burst` lines
// per window; the rest are counted and reported in one line when the window ends.
import type { Logger } from 'pino';

export interface ClientErrorLine {
  status: number;
  code: string;
  message: string;
  reqId?: string;
  method?: string;
  route?: string;
}

const MESSAGE_LIMIT = 200;

export class ClientErrorLog {
  private readonly windows = new Map<string, { start: number; logged: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly opts: { burst: number; windowMs: number; now: () => number } = { burst: 20, windowMs: 60_000, now: Date.now },
  ) {}

  record(line: ClientErrorLine): void {
    const kind = `${line.status} ${line.code}`;
    const now = this.opts.now();
    let w = this.windows.get(kind);
    if (w && now - w.start >= this.opts.windowMs) {
      if (w.suppressed > 0) this.logger.info({ status: line.status, code: line.code, suppressed: w.suppressed }, 'client errors suppressed');
      w = undefined;
    }
    if (!w) {
      // Kinds are bounded (status x catalogue code), so the map is too.
      w = { start: now, logged: 0, suppressed: 0 };
      this.windows.set(kind, w);
    }
    if (w.logged >= this.opts.burst) {
      w.suppressed++;
      return;
    }
    w.logged++;
    const message = line.message.length > MESSAGE_LIMIT ? `${line.message.slice(0, MESSAGE_LIMIT)}…` : line.message;
    this.logger.info({ reqId: line.reqId, method: line.method, route: line.route, status: line.status, code: line.code }, message);
  }
}
