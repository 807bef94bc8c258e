// A loopback HTTP server standing in for the brain, for unit tests of CLI commands: it records each
// request (method, URL, JSON body) and answers what the test says; `io` captures stdout and stderr.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Connection } from '../../cli/connection';

export interface Seen {
  method: string;
  url: string;
  body: unknown;
}

export async function fakeBrain(t: { after(fn: () => void): void }, answer: (s: Seen) => [number, unknown]) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', body: raw ? (JSON.parse(raw) as unknown) : undefined };
      seen.push(s);
      const [status, body] = answer(s);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => server.close());
  const conn = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't', home: '/nonexistent' } satisfies Connection;
  return { conn, seen };
}

export function io() {
  const text = { out: '', err: '' };
  const sink = (k: 'out' | 'err') => new Writable({ write: (c: Buffer, _e, cb) => ((text[k] += c.toString()), cb()) });
  return { text, io: { out: sink('out'), err: sink('err'), stdin: process.stdin, env: {} } };
}
