// The `sync` section of settings.json (docs/sync.md): whether this brain syncs its memory with its
// paired brains, and the static peers it dials.
import { Type, type Static } from '@sinclair/typebox';

const SyncPeer = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^wss?://', description: "The peer's /sync WebSocket URL, e.g. ws://brain-b.local:7420/sync" }),
    brain_id: Type.String({ minLength: 1, maxLength: 128, description: "The peer brain's id; its sync key must be pinned by pairing" }),
  },
  { additionalProperties: false },
);

export const SyncSettings = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: 'Sync memory with paired brains; false mounts no /sync route and journals nothing' }),
    peers: Type.Array(SyncPeer, { maxItems: 64, default: [], description: 'Static peers to dial, in addition to those found over mDNS (_svc-sync._tcp)' }),
  },
  { additionalProperties: false, default: {} },
);

export type SyncSettings = Static<typeof SyncSettings>;
