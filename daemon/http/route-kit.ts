// What a capability's folder uses to write its HTTP and WebSocket routes: fastify stays behind the
// HTTP layer (only http/, ws/ and app.ts import it; test/layout.test.ts), and the kernel's contract
// carries route plugins opaquely. `routes()` turns a TypeBox-typed plugin into the contract's type.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../kernel/capability';

export type { FastifyPluginAsyncTypebox as TypedRoutes } from '@fastify/type-provider-typebox';
/** Who a request acts for as one string (`admin`, `device:<id>`…): for audit entries and logs. */
export { principalId } from '../auth/principal';

export const routes = (plugin: FastifyPluginAsyncTypebox): RoutePlugin => plugin;
