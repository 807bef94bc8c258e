// The mesh capability (issue 13, docs/mesh.md): the brain announces itself over mDNS/DNS-SD —
// `_svc._tcp` (its API), `_feral-brain._tcp` (the node protocol, for HUP node SDKs and node-agent)
// and `_svc-sync._tcp` (peers) — as `<hostname>.local`, whenever the access mode lets other devices
// in. In localhost mode nothing is announced and bonjour-service is never loaded (mesh/mdns.ts).
import { hostname, networkInterfaces } from 'node:os';
import { Type } from '@sinclair/typebox';
import { loadBrainId } from '../../mesh/brain-id';
import { MdnsAdvertiser } from '../../mesh/mdns';
import { defineCapability } from '../kernel/capability';
import { MeshAdvertising } from './mesh-advertising';

export const MESH = 'mesh';

// The release, set by the bundler (build.mjs define), as daemon/main.ts reads it.
declare const __SVC_VERSION__: string;
const VERSION = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';

/** How often the machine's addresses are compared with the announced ones (a DHCP renewal, a new Wi-Fi). */
export const ADDRESS_CHECK_MS = 30_000;

export const MeshSettings = Type.Object(
  {
    advertise: Type.Boolean({ default: true, description: 'Announce the brain over mDNS while it is reachable beyond loopback (access mode lan or remote); never in localhost mode' }),
    advertise_sync: Type.Boolean({ default: true, description: 'Also announce _svc-sync._tcp, by which other brains find this one (SVC_SYNC_DISABLED=1 turns it off)' }),
  },
  { additionalProperties: false, default: {} },
);

/** The machine's addresses other devices could use (not loopback), as os.networkInterfaces() lists them now. */
export function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal)
    .map((a) => a.address);
}

export const meshCapability = defineCapability({
  name: MESH,
  settings: MeshSettings,
  create: (context, settings) => {
    const advertiser = new MdnsAdvertiser({ log: context.logger });
    const advertising = new MeshAdvertising({
      advertiser,
      bus: context.bus,
      clock: context.clock,
      logger: context.logger,
      enabled: settings.advertise,
      sync: settings.advertise_sync,
      version: VERSION,
      hostname,
      brainId: () => loadBrainId(context.home),
      interfaceAddresses,
    });
    let timer: NodeJS.Timeout | undefined;
    return {
      parts: [
        {
          name: 'mdns',
          start: () => {
            advertising.start();
            context.listener.onListening((addresses) => advertising.listening(addresses));
            if (!settings.advertise) return;
            timer = setInterval(() => advertising.checkAddresses(), ADDRESS_CHECK_MS);
            timer.unref();
          },
          stop: async () => {
            clearInterval(timer);
            await advertising.stop();
          },
        },
      ],
    };
  },
});
