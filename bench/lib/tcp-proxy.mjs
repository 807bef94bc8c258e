// A counting TCP proxy for bench sections: listens on a loopback port, forwards every connection to
// one target port, and counts the bytes each way, so a section can report the bytes a protocol put on
// the wire (TCP payload: HTTP upgrade, WebSocket framing and the frames themselves; no IP/TCP headers).
// `cut()` closes the listener and destroys every forwarded connection (a partition: new dials are
// refused), `heal()` listens again on the same port. With `frames`, the WebSocket frames each way are
// also read and counted by type (bench/lib/ws-tap.mjs).
import { connect, createServer } from 'node:net';
import { frameTotals, wsTap } from './ws-tap.mjs';

/**
 * Starts a proxy from 127.0.0.1:`port` (0: any free port) to 127.0.0.1:`target`. Resolves with
 * { port, bytes() -> {up, down, total, connections}, frames() -> {up, down} (with `frames: true`),
 * cut(), heal(), close() }. `up` is client → target.
 */
export async function startTcpProxy({ target, port = 0, frames = false }) {
  const counts = { up: 0, down: 0, connections: 0 };
  const totals = frames ? { up: frameTotals(), down: frameTotals() } : null;
  const open = new Set();
  const server = createServer((client) => forward(client, target, counts, open, totals));
  const listen = (p) =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(server.address().port);
      });
    });
  const bound = await listen(port);
  const cut = () =>
    new Promise((resolve) => {
      for (const socket of open) socket.destroy();
      open.clear();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port: bound,
    bytes: () => ({ up: counts.up, down: counts.down, total: counts.up + counts.down, connections: counts.connections }),
    frames: () => structuredClone(totals),
    cut,
    heal: () => (server.listening ? Promise.resolve(bound) : listen(bound)),
    close: cut,
  };
}

/** Pipes one accepted connection to the target, counting what passes; either side ending ends both. */
function forward(client, target, counts, open, totals) {
  counts.connections++;
  const upstream = connect(target, '127.0.0.1');
  open.add(client);
  open.add(upstream);
  const tapUp = totals === null ? null : wsTap(totals.up);
  const tapDown = totals === null ? null : wsTap(totals.down);
  client.on('data', (chunk) => {
    counts.up += chunk.length;
    tapUp?.(chunk);
  });
  upstream.on('data', (chunk) => {
    counts.down += chunk.length;
    tapDown?.(chunk);
  });
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
    open.delete(client);
    open.delete(upstream);
  };
  // A reset or a refused target is the end of this connection, nothing more: the dialler sees it close.
  client.on('error', end);
  upstream.on('error', end);
  client.on('close', end);
  upstream.on('close', end);
}
