// A raw `ws` client for /v1/session on a brain process: collects frames and waits for a frame type.
import { WebSocket } from 'ws';
import type { BrainProcess } from './brain-process';
import type { BrainMessage, BrainMessageOf } from '../../protocol/session';

export interface SessionClient {
  ws: WebSocket;
  frames: BrainMessage[];
  next: (type: string) => Promise<BrainMessage>;
}

export function connect(brain: BrainProcess): Promise<{ ws: WebSocket; frames: BrainMessage[]; next: (type: string) => Promise<BrainMessage> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${brain.token}`]);
  const frames: BrainMessage[] = [];
  const waiting: { type: string; resolve: (m: BrainMessage) => void }[] = [];
  ws.on('message', (d: Buffer) => {
    const m = JSON.parse(d.toString('utf8')) as BrainMessage;
    frames.push(m);
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m);
  });
  const next = (type: string) => new Promise<BrainMessage>((resolve) => waiting.push({ type, resolve }));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, next }));
    ws.once('error', reject);
  });
}

/**
 * The first frame of `type` from index `from` of `frames` on for which `match` holds, already received or
 * still to come on `ws` (whose collecting listener, added by connect, runs first: `frames` holds the new one).
 */
export function waitForFrame<T extends BrainMessage['type']>(ws: WebSocket, frames: BrainMessage[], type: T, match: (m: BrainMessageOf<T>) => boolean = () => true, from = 0): Promise<BrainMessageOf<T>> {
  return new Promise((resolve) => {
    const hit = (m: BrainMessage): m is BrainMessageOf<T> => m.type === type && match(m as BrainMessageOf<T>);
    const found = frames.slice(from).find(hit);
    if (found) return resolve(found);
    const on = (): void => {
      const m = frames.at(-1);
      if (m && hit(m)) {
        ws.off('message', on);
        resolve(m);
      }
    };
    ws.on('message', on);
  });
}
