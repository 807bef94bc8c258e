// The identity capability: USER.md and SOUL.md over /api/identity, the digital twin that answers as
// the user would (spec 4.5, 2.11), and the `identity` tool. The files themselves are core (the agent
// reads them every turn); this capability is their face to clients and to the model.
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { DigitalTwin } from './digital-twin';
import { identityRoutes } from './identity-routes';
import { identityTool } from './identity-tool';

export const identityCapability = defineCapability({
  name: 'identity',
  create: ({ core }) => ({
    routes: [routes(identityRoutes({ files: core.identity, twin: new DigitalTwin(core.identity, core.memory, { relevanceFloor: core.relevanceFloor }, core.devices) }))],
    tools: [identityTool(core.identity)],
  }),
});
