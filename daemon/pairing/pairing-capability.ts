// The pairing capability (issue 13 "Pairing"; spec 4.6, 5.4; docs/pairing.md): pairing tokens with
// PINs and pair URLs/QR codes, the 6-digit code flow for nodes, the paired devices' credentials (a
// verifier the brain's authentication asks after the API token), revoke and session handoff. It learns
// where the brain can be reached from the access capability's `access_mode` events and the mDNS
// capability's `mdns_advertised` events on the bus.
import { defineCapability } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import type { PairingClaims } from '../kernel/ports';
import { loadBrainId } from '../../mesh/brain-id';
import { keyFingerprint } from '../../sync/identity-keys';
import { readSyncPublicKey } from '../../sync/identity-key-file';
import type { BrainEvent } from '../kernel/events';
import { routes } from '../http/route-kit';
import { CodePairing } from './code-pairing';
import { DeviceCredentials } from './device-credentials';
import { Pairing, type Reachability } from './pairing';
import { PAIRING_MIGRATIONS } from './pairing-store';
import { pairingRoutes } from './pairing-routes';

export const PAIRING = 'pairing';

/** Follows the bus: the access mode and its URLs, and the mDNS name while one is advertised. */
export function followReachability(): { reach: () => Reachability; hear: (event: BrainEvent) => void } {
  const state: Reachability = { mode: 'localhost', urls: [], mdns: null };
  const hear = (event: BrainEvent): void => {
    if (event.type === 'access_mode') {
      state.mode = event.mode;
      state.urls = [...event.urls];
    } else if (event.type === 'mdns_advertised') state.mdns = `${event.host}:${event.port}`;
    else if (event.type === 'mdns_withdrawn') state.mdns = null;
  };
  return { reach: () => ({ ...state, urls: [...state.urls] }), hear };
}

export const pairingCapability = defineCapability({
  name: PAIRING,
  create: (context) => {
    const credentials = new DeviceCredentials();
    const follow = followReachability();
    context.bus.on(PAIRING, follow.hear);
    let brainId: string | undefined;
    const pairing = new Pairing({
      store: context.store,
      clock: context.clock,
      credentials,
      connections: context.core.connections,
      bus: context.bus,
      reach: follow.reach,
      brainId: () => (brainId ??= loadBrainId(context.home)),
      syncKey: () => {
        const key = readSyncPublicKey(context.home, (brainId ??= loadBrainId(context.home)));
        return key === undefined ? null : keyFingerprint(key);
      },
      logger: context.logger,
    });
    const codes = new CodePairing(pairing, context.clock);
    // core.pairing: a peer brain completing pairing through the sync capability claims a `brain` token here.
    const claims: PairingClaims = {
      claim: async (token, kind, name) => {
        // The name the person gave when minting (`svc pair --kind brain --name cabin`) wins over the one the device calls itself.
        const device = await pairing.complete({ token, name }, kind, true);
        return { deviceId: device.device_id, name: device.name };
      },
      revoke: async (deviceId) => {
        try {
          await pairing.revoke(deviceId);
          return true;
        } catch (err) {
          if (err instanceof AppError && err.code === 'NOT_FOUND') return false;
          throw err;
        }
      },
    };
    return {
      migrations: PAIRING_MIGRATIONS,
      parts: [{ name: 'paired-devices', start: () => pairing.start() }],
      routes: [routes(pairingRoutes(pairing, codes, context.clock))],
      verifiers: [credentials],
      pairingClaims: claims,
    };
  },
});
