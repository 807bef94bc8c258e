// pino JSON lines on stdout for journald (STYLE.md 10): no transports (they need worker files a
// bundle does not carry), secrets redacted wherever they might appear: known fields by path, and
// every finished line through the secret scrubber (issue 8 §4), so a key echoed by a provider in any
// encoding, in a message, a field, a binding or an error's message and stack, never reaches the log.
// The scrub runs per written line only: /health and other silent paths pay nothing.
import { pino, type Logger, type DestinationStream } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["sec-websocket-protocol"]',
  'headers.authorization',
  '*.secret',
  '*.token',
  '*.api_key',
  '*.apiKey',
  '*.password',
  '*.private_key',
  '*.device_token',
  'secret',
  'token',
  'api_key',
];

/** The part of SecretScrubber (daemon/agent/tools/secret-scrubber.ts) the logger uses. */
export interface LineScrubber {
  scrub(text: string): string;
}

export function createLogger(level: string, destination?: DestinationStream, scrubber?: LineScrubber): Logger {
  const out = destination ?? pino.destination({ dest: 1, sync: false });
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; id?: string }) => ({ id: req.id, method: req.method, url: req.url ? redactUrl(req.url) : undefined }),
      },
    },
    scrubber ? scrubbedStream(out, scrubber) : out,
  );
}

type FlushableStream = DestinationStream & { flush?: (cb?: (err?: Error | null) => void) => void; flushSync?: () => void };

/** Writes each line scrubbed; flush and flushSync reach the real stream (main.ts flushes before exit). */
export function scrubbedStream(dest: FlushableStream, scrubber: LineScrubber): FlushableStream {
  return {
    write: (line: string) => dest.write(scrubLine(line, scrubber)),
    flush: (cb?: (err?: Error | null) => void) => (dest.flush ? dest.flush(cb) : cb?.(null)),
    flushSync: () => dest.flushSync?.(),
  };
}

/**
 * A line with a secret in it comes out with the secret replaced. Should the replaced span have taken
 * JSON syntax with it (a secret that contains `":"`), the line no longer parses; it is then withheld
 * whole, in a line that says so, rather than written broken or with the secret.
 */
export function scrubLine(line: string, scrubber: LineScrubber): string {
  const clean = scrubber.scrub(line);
  if (clean === line) return line;
  try {
    JSON.parse(clean);
    return clean;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const level = /^\{"level":(\d+)/.exec(line)?.[1] ?? '50';
    return `${JSON.stringify({ level: Number(level), time: Date.now(), pid: process.pid, msg: 'log line withheld: it carried a secret' })}\n`;
  }
}

/** Removes credentials from a URL before it is logged: the WebSocket `access_token` query form (docs/api.md) and /v1/node's deprecated `api_key` (docs/node-protocol.md). */
export const redactUrl = (url: string): string => url.replace(/([?&](?:access_token|api_key)=)[^&]*/g, '$1[REDACTED]');
