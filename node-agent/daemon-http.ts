// The node-agent's HTTP client of the brain for daemon delivery (daemon-sync.ts): node:http/https with
// the node key, a bound on the body and an abort signal. Not the global fetch: its first call loads
// undici, ~10 MiB of resident memory on a board that otherwise never needs it (the WebSocket link
// already loads node:http). A body past its bound is refused as soon as the Content-Length header or the
// bytes received say so, without reading the rest.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface BrainRequest {
  method: 'GET' | 'POST';
  /** An absolute path on the brain (/api/…); the brain's own path prefix, if any, comes first. */
  path: string;
  /** A JSON body. */
  body?: string;
  signal: AbortSignal;
  /** The most bytes of body taken; past them the request fails with ResponseTooLarge. */
  maxBytes: number;
}

export interface BrainResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Uint8Array;
}

export type BrainHttp = (request: BrainRequest) => Promise<BrainResponse>;

/** The body is larger than the request's bound. */
export class ResponseTooLarge extends Error {}
/** The brain could not be reached, or the connection broke (the message says how). */
export class BrainUnreachable extends Error {}

/** Requests to the brain at `brainUrl` (http or https) with `Authorization: Bearer <key>`; no redirects are followed. */
export function brainHttp(brainUrl: string, key: string): BrainHttp {
  const base = new URL(brainUrl);
  const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
  const prefix = base.pathname.replace(/\/+$/, '');
  return (req) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${key}` };
      if (req.body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) });
      const fail = (err: Error): void => reject(req.signal.aborted ? (req.signal.reason as Error) : err);
      let answered = false;
      const outgoing = send({ protocol: base.protocol, hostname: base.hostname, port: base.port, path: `${prefix}${req.path}`, method: req.method, headers, signal: req.signal }, (res) => {
        answered = true;
        void readBody(res, req.maxBytes).then((body) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }), fail);
      });
      // Once answered, the body's reader says what went wrong (a refused body destroys the socket, which the request reports too).
      outgoing.on('error', (err) => answered || fail(new BrainUnreachable(`${req.method} ${req.path}: ${err.message}`)));
      outgoing.end(req.body);
    });
}

function readBody(res: IncomingMessage, max: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const tooLarge = (): void => {
      reject(new ResponseTooLarge(`the answer is larger than ${max} bytes`)); // first: destroying emits errors of its own
      res.destroy();
    };
    if (Number(res.headers['content-length'] ?? 0) > max) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) tooLarge();
      else chunks.push(chunk);
    });
    res.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    res.on('error', (err) => reject(new BrainUnreachable(`the answer broke off: ${err.message}`)));
    res.on('aborted', () => reject(new BrainUnreachable('the answer broke off')));
  });
}
