// GET /health (spec 4.12): the one endpoint that answers without a token.
import { Type, type Static } from '@sinclair/typebox';

export const HealthResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('stopping')]),
  version: Type.String(),
  uptime_s: Type.Number({ minimum: 0 }),
});
export type HealthResponse = Static<typeof HealthResponse>;
