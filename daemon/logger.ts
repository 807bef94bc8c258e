// pino JSON lines on stdout for journald (STYLE.md 10): no transports (they need worker files a
// bundle does not carry), secrets redacted wherever they might appear.
import { pino, type Logger, type DestinationStream } from 'pino';
import { redactUrl } from './http/auth';

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

export function createLogger(level: string, destination?: DestinationStream): Logger {
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
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
