// A pairing service on a real SQLite store in a temp folder, with a settable clock and fake sockets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { TestContext } from 'node:test';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { PAIRING_MIGRATIONS } from '../../../daemon/pairing/pairing-store';
import { Pairing, type Reachability } from '../../../daemon/pairing/pairing';
import { DeviceCredentials } from '../../../daemon/pairing/device-credentials';
import type { ClientConnection, ClientConnections } from '../../../daemon/kernel/ports';
import type { BrainEvent } from '../../../daemon/kernel/events';

export const BRAIN_ID = '3f2b1c4d-1111-4222-8333-444455556666';

/** Sockets by principal; close() removes them and records what was closed. */
export class FakeConnections implements ClientConnections {
  open: ClientConnection[] = [];
  closed: { principal: string; code: number }[] = [];
  handoffs: { sessionId: string; from: string; to: string }[] = [];
  list(): ClientConnection[] {
    return [...this.open];
  }
  close(principal: string, code: number): number {
    const mine = this.open.filter((c) => c.principal === principal);
    this.open = this.open.filter((c) => c.principal !== principal);
    for (const _ of mine) this.closed.push({ principal, code });
    return mine.length;
  }
  broadcast(): number {
    return this.open.length;
  }
  handoff(sessionId: string, from: string, to: string): { attached: number; detached: number } {
    this.handoffs.push({ sessionId, from, to });
    return { attached: 1, detached: 1 };
  }
}

export interface Rig {
  dir: string;
  store: SqliteStore;
  clock: { now: () => number; t: number };
  credentials: DeviceCredentials;
  connections: FakeConnections;
  reach: Reachability;
  pairing: Pairing;
  /** What the pairing emitted on the bus (device_revoked). */
  events: BrainEvent[];
}

export function pairingRig(t: TestContext, opts: { dir?: string; syncKey?: string } = {}): Rig {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'svc-pairing-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate('pairing', PAIRING_MIGRATIONS);
  const clock = { t: 1_767_000_000_000, now: () => clock.t };
  const credentials = new DeviceCredentials();
  const connections = new FakeConnections();
  const reach: Reachability = { mode: 'localhost', urls: [], mdns: null };
  const revoked: BrainEvent[] = [];
  const pairing = new Pairing({ store, clock, credentials, connections, bus: { emit: (e) => void revoked.push(e) }, reach: () => reach, brainId: () => BRAIN_ID, syncKey: () => opts.syncKey ?? null, logger: pino({ level: 'silent' }) });
  pairing.start();
  t.after(() => {
    store.close();
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store, clock, credentials, connections, reach, pairing, events: revoked };
}
