// /api/dashboard (spec 4.2, 2.10). Spec 4.2 leaves the shapes of status, context and timeline "not
// shown"; the design is documented in docs/protocol.md. A source that does not exist yet (devices,
// health readings, calendar) is an empty section, never an error, so a dashboard renders on day one.
import { Type, type ObjectOptions, type Static, type TProperties } from '@sinclair/typebox';
import { SduiComponent, Specialist, MAX_COMMAND_CHARS } from './session';
import { Id, Text } from './text';

const Obj = <T extends TProperties>(properties: T, options?: ObjectOptions) => Type.Object(properties, options);

export const DeviceSummary = Obj({
  id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  online: Type.Boolean(),
  state: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
});
export type DeviceSummary = Static<typeof DeviceSummary>;

export const CommandRequest = Obj(
  {
    text: Text({ minLength: 1, maxLength: MAX_COMMAND_CHARS, blank: false }),
    session_id: Type.Optional(Id({ maxLength: 128, description: 'Run in this open session; default: the dashboard session' })),
  },
  { additionalProperties: false },
);
export type CommandRequest = Static<typeof CommandRequest>;

/** Spec 2.10, plus the turn's identifiers. */
export const CommandResponse = Obj({
  response: Type.String(),
  sdui: Type.Union([SduiComponent, Type.Null()]),
  sources: Type.Array(Type.String()),
  session_id: Type.String(),
  turn_id: Type.String(),
  specialist: Specialist,
});
export type CommandResponse = Static<typeof CommandResponse>;

export const DashboardStatus = Obj({
  status: Type.Union([Type.Literal('ok'), Type.Literal('stopping')]),
  version: Type.String(),
  uptime_s: Type.Number({ minimum: 0 }),
  sessions: Obj({
    open: Type.Integer({ minimum: 0 }),
    with_clients: Type.Integer({ minimum: 0, description: 'Sessions with a WebSocket client attached (svc_ws_active_sessions)' }),
    clients: Type.Integer({ minimum: 0 }),
    turns_total: Type.Integer({ minimum: 0, description: 'Turns run since the brain started' }),
  }),
  provider: Obj({ id: Type.String(), kind: Type.String() }),
  tools: Type.Array(Type.String()),
  devices: Obj({ connected: Type.Integer({ minimum: 0 }), items: Type.Array(DeviceSummary) }),
  pid: Type.Optional(Type.Integer({ minimum: 1, description: 'The brain process, for svc status and svc start (authenticated, never on /health)' })),
});
export type DashboardStatus = Static<typeof DashboardStatus>;

export const DashboardContext = Obj({
  generated_at: Type.String({ format: 'date-time' }),
  identity: Obj({ user_name: Type.Union([Type.String(), Type.Null()]), assistant_name: Type.String() }),
  health: Obj({ readings: Type.Array(Obj({ source: Type.String(), name: Type.String(), value: Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]), at: Type.Number() })) }),
  scene: Obj({ devices: Type.Array(DeviceSummary) }),
  calendar: Obj({ events: Type.Array(Obj({ title: Type.String(), starts_at: Type.String(), ends_at: Type.Union([Type.String(), Type.Null()]) })) }),
});
export type DashboardContext = Static<typeof DashboardContext>;

export const TimelineKind = Type.Union([Type.Literal('turn'), Type.Literal('session_opened'), Type.Literal('session_closed'), Type.Literal('tool_denied')]);
export const TimelineItem = Obj({
  id: Type.String(),
  at: Type.Number({ description: 'Epoch seconds with fraction' }),
  kind: TimelineKind,
  session_id: Type.String(),
  title: Type.String({ description: 'One line: the user message, or what happened' }),
  detail: Type.Union([Type.String(), Type.Null()], { description: 'The answer (turns), the reason (denials), the episode id (session_closed)' }),
});
export type TimelineItem = Static<typeof TimelineItem>;

export const TimelineQuery = Obj({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }, { additionalProperties: false });
export const Timeline = Obj({ items: Type.Array(TimelineItem, { description: 'Newest first' }) });
export type Timeline = Static<typeof Timeline>;
