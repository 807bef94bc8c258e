// The access capability (spec 4.7, issue 13; docs/access.md): owns the access mode — where the brain
// listens and whether a Tailscale tunnel reaches it — serves /api/access, and announces the mode on
// the bus (`access_mode`) for pairing and mDNS.
import { networkInterfaces, userInfo } from 'node:os';
import { join } from 'node:path';
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { AccessControl } from './access-control';
import { accessRoutes } from './access-routes';
import { AccessSettings } from './access-settings';
import { TailscaleCli } from './tailscale';

export const accessCapability = defineCapability({
  name: 'access',
  settings: AccessSettings,
  create: (context, settings) => {
    const tunnel = new TailscaleCli({ executable: 'tailscale', timeoutMs: 20_000, user: userInfo().username });
    const control = new AccessControl({
      listener: context.listener,
      bus: context.bus,
      clock: context.clock,
      logger: context.logger,
      settings,
      settingsFile: join(context.home, 'settings.json'),
      tunnel,
      interfaces: networkInterfaces,
    });
    return {
      // Started before the http part: the listener is told where to listen before it binds.
      parts: [{ name: 'access-mode', start: () => control.start(), stop: () => control.stop() }],
      routes: [routes(accessRoutes(control))],
    };
  },
});
