// The /v1/session wire contract (spec 2.15, 4.13, 6.2): every frame in either direction is one JSON
// envelope {type, session_id, payload}. Spec 2.15 names six types and leaves the full list and every
// payload "not shown"; the complete set designed here is documented in docs/protocol.md.
//
// Direction is part of each type's contract: ClientMessage is what a client may send, BrainMessage
// what the brain sends. telemetry travels both ways (device readings relayed to UIs; a phone's own
// sensor readings sent in).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ProactiveAlert } from './hardware';

export const SESSION_PROTOCOL_VERSION = 1;
/** Largest accepted text_command text (characters); a frame itself is capped at 1 MiB by the server. */
export const MAX_COMMAND_CHARS = 16_000;

const SessionId = Type.String({ maxLength: 128, description: 'Session the frame belongs to; "" on session_open (or a first text_command) opens a new session' });
const TurnId = Type.String({ minLength: 1, maxLength: 128, description: 'Identifies one turn (one user message and everything it caused)' });

const envelope = <T extends string, P extends TSchema>(type: T, payload: P, description: string) =>
  Type.Object({ type: Type.Literal(type), session_id: SessionId, payload }, { additionalProperties: false, description });

const Obj = <P extends Record<string, TSchema>>(props: P) => Type.Object(props, { additionalProperties: false });

// ── Shared payload parts ─────────────────────────────────────────────────────────────────────────
export const SPECIALISTS = ['general', 'health', 'home', 'research', 'creative'] as const;
export const Specialist = Type.Union(
  [Type.Literal('general'), Type.Literal('health'), Type.Literal('home'), Type.Literal('research'), Type.Literal('creative')],
  { description: 'Router worker that handled the turn' },
);
export type SpecialistName = Static<typeof Specialist>;

export const SafetyLevel = Type.Union([Type.Literal('passive'), Type.Literal('active'), Type.Literal('privileged'), Type.Literal('dangerous')], {
  description: 'passive reads, active changes user data or devices, privileged touches the host or secrets, dangerous is irreversible',
});
export type SafetyLevel = Static<typeof SafetyLevel>;

/** Server-driven UI (spec 1.5): a known template with its data; clients render known contracts only. */
export const SduiTemplate = Type.Union([Type.Literal('card'), Type.Literal('chart'), Type.Literal('map'), Type.Literal('form'), Type.Literal('list')]);
export const SduiComponent = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Stable id that later sdui_patch frames address' }),
    template: SduiTemplate,
    title: Type.Optional(Type.String({ maxLength: 200 })),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'Template-specific data (docs/protocol.md)' }),
  },
  { additionalProperties: false },
);
export type SduiComponent = Static<typeof SduiComponent>;

export const SduiPatchOp = Obj({
  op: Type.Union([Type.Literal('add'), Type.Literal('replace'), Type.Literal('remove')]),
  path: Type.String({ description: 'JSON pointer into the component data (RFC 6901)' }),
  value: Type.Optional(Type.Unknown()),
});

export const Usage = Obj({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) });

// ── Client → brain ───────────────────────────────────────────────────────────────────────────────
export const SessionOpen = envelope(
  'session_open',
  Obj({ history_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 200, description: 'Messages of history to replay on resume (default 20)' })) }),
  'Opens a new session (session_id "") or joins an existing one by id. Answered by session_opened.',
);
export const TextCommand = envelope(
  'text_command',
  Obj({
    text: Type.String({ minLength: 1, maxLength: MAX_COMMAND_CHARS }),
    turn_id: Type.Optional(TurnId),
  }),
  'A user message. Turns of one session run one after another, in arrival order. On a connection attached to no session, an empty or unknown session_id opens a new session (announced by session_opened) first.',
);
export const TurnCancel = envelope('turn_cancel', Obj({ turn_id: Type.Optional(TurnId) }), 'Aborts the running turn (or the named queued one).');
export const SessionClose = envelope('session_close', Obj({}), 'Ends the session for every client: working memory is cleared and an episode is written.');
export const SessionLeave = envelope('session_leave', Obj({}), 'Detaches this connection from the session; the session stays open for others.');
export const Ping = envelope('ping', Obj({ nonce: Type.Optional(Type.String({ maxLength: 64 })) }), 'Application-level heartbeat for clients that cannot send WebSocket pings.');
export const TelemetryIn = envelope(
  'telemetry',
  Obj({ source: Type.String({ minLength: 1, maxLength: 128 }), readings: Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()])), at: Type.Optional(Type.Number()) }),
  'Sensor readings from the client itself (a phone). Relayed to the other clients of the session.',
);

export const ClientMessage = Type.Union([SessionOpen, TextCommand, TurnCancel, SessionClose, SessionLeave, Ping, TelemetryIn]);
export type ClientMessage = Static<typeof ClientMessage>;
export const CLIENT_TYPES = ['session_open', 'text_command', 'turn_cancel', 'session_close', 'session_leave', 'ping', 'telemetry'] as const;

// ── Brain → client ───────────────────────────────────────────────────────────────────────────────
export const HistoryMessage = Obj({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  text: Type.String(),
  turn_id: Type.String(),
  at: Type.Number({ description: 'Epoch seconds with fraction' }),
});
export type HistoryMessage = Static<typeof HistoryMessage>;

export const SessionOpened = envelope(
  'session_opened',
  Obj({
    resumed: Type.Boolean(),
    protocol: Type.Integer(),
    history: Type.Array(HistoryMessage),
    clients: Type.Integer({ minimum: 1, description: 'Connections attached to the session, this one included' }),
  }),
  'Reply to session_open; session_id is the (new) session.',
);
export const TurnStarted = envelope(
  'turn_started',
  Obj({ turn_id: TurnId, text: Type.String(), specialist: Specialist, continues: Type.Optional(TurnId) }),
  'A turn began; sent to every client of the session so all of them see the user message. A continuation (after a held tool call was approved or rejected) names the turn it continues in `continues`, and its `text` is the brain\'s "[approval] ..." line, not words of the user.',
);
export const StreamDelta = envelope('stream_delta', Obj({ turn_id: TurnId, text: Type.String() }), 'A piece of the answer text; concatenated in order they form text_response.text.');
export const ToolCallEvent = envelope(
  'tool_call',
  Obj({ turn_id: TurnId, call_id: Type.String(), name: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()), safety_level: SafetyLevel }),
  'The model asked for a tool.',
);
export const ToolResultEvent = envelope(
  'tool_result',
  Obj({
    turn_id: TurnId,
    call_id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('denied'), Type.Literal('pending_approval')]),
    summary: Type.String({ description: 'One line for humans; never contains vault secrets' }),
  }),
  'Outcome of a tool call after the permission hook.',
);
export const SduiPayload = envelope('sdui_payload', Obj({ turn_id: TurnId, component: SduiComponent }), 'A tool produced UI data; render it with the named template.');
export const SduiPatch = envelope('sdui_patch', Obj({ turn_id: Type.Optional(TurnId), component_id: Type.String(), ops: Type.Array(SduiPatchOp, { minItems: 1 }) }), 'Incremental update of a rendered component.');
export const TextResponse = envelope(
  'text_response',
  Obj({
    turn_id: TurnId,
    text: Type.String(),
    specialist: Specialist,
    provider: Type.String(),
    model: Type.String(),
    finish_reason: Type.Union([Type.Literal('stop'), Type.Literal('length'), Type.Literal('tool_limit'), Type.Literal('cancelled'), Type.Literal('error')]),
    tool_steps: Type.Integer({ minimum: 0 }),
    sources: Type.Array(Type.String(), { description: 'Data sources the answer used (memory ids, devices, identity files)' }),
    usage: Type.Optional(Usage),
  }),
  'Closes a turn: the whole answer. Always sent, also after an error or a cancel.',
);
export const TelemetryOut = envelope('telemetry', TelemetryIn.properties.payload, 'Readings relayed from a device or another client.');
export const ErrorMessage = envelope(
  'error',
  Obj({
    code: Type.String({ description: 'Stable code: BAD_FRAME, UNKNOWN_TYPE, INVALID_PAYLOAD, NOT_IN_SESSION, NOT_FOUND, BUSY, TURN_FAILED, ...' }),
    message: Type.String(),
    details: Type.Union([Type.Unknown(), Type.Null()]),
    turn_id: Type.Optional(TurnId),
  }),
  'Something a client sent could not be handled, or a turn failed. The connection stays open.',
);
export const Pong = envelope('pong', Obj({ nonce: Type.Optional(Type.String()) }), 'Answer to ping.');
export const SessionClosed = envelope(
  'session_closed',
  Obj({
    reason: Type.Union([Type.Literal('closed_by_client'), Type.Literal('idle'), Type.Literal('evicted'), Type.Literal('shutdown'), Type.Literal('left'), Type.Literal('handed_off')]),
    episode_id: Type.Union([Type.String(), Type.Null()]),
  }),
  'The session ended (or, with reason left, this connection detached; handed_off: the session was moved to another device, POST /api/devices/handoff). evicted: it had no client and no turn when the brain needed its room.',
);

/** The fields of an approval request (spec 2.6) but its status: the approvals list and this frame share them. */
export const APPROVAL_REQUEST_FIELDS = {
  request_id: Type.String(),
  session_id: Type.String(),
  tool_name: Type.String(),
  args: Type.Record(Type.String(), Type.Unknown()),
  safety_level: SafetyLevel,
  created_at: Type.Number({ description: 'Epoch seconds with fraction' }),
};

export const ApprovalRequested = envelope(
  'approval_requested',
  Obj({ ...APPROVAL_REQUEST_FIELDS, status: Type.Literal('pending'), turn_id: TurnId }),
  'A tool call of this session was held for approval (the spec 2.6 fields of the request, and the turn that asked). Resolve it with POST /api/approvals/{request_id}/approve or /reject.',
);
export const ApprovalResolved = envelope(
  'approval_resolved',
  Obj({
    request_id: Type.String(),
    turn_id: TurnId,
    tool_name: Type.String(),
    status: Type.Union([Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('expired')]),
  }),
  'A held tool call of this session was approved (it ran; its outcome follows as a tool_result whose call_id is the request_id), rejected (it never runs) or expired.',
);

const FLOW_STATUS = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
const STEP_STATUS = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'unknown'] as const;
export const TaskflowUpdate = envelope(
  'taskflow_update',
  Obj({
    flow_id: Type.String(),
    title: Type.String(),
    status: Type.Union(FLOW_STATUS.map((s) => Type.Literal(s))),
    current_step: Type.Union([Type.Integer(), Type.Null()]),
    step: Type.Optional(Obj({ index: Type.Integer(), type: Type.String(), status: Type.Union(STEP_STATUS.map((s) => Type.Literal(s))), error: Type.Union([Type.String(), Type.Null()]) })),
    reason: Type.String(),
    at: Type.Number({ description: 'Epoch seconds' }),
  }),
  'A TaskFlow of this session changed: the flow\'s status, and the step that changed (protocol/taskflows.ts, docs/taskflows.md). GET /api/taskflows/{flow_id} has the whole timeline.',
);

export const ProactiveAlertFrame = envelope(
  'proactive_alert',
  ProactiveAlert,
  'A proactive alert from device telemetry (a threshold crossed, a battery low, a node offline; docs/hardware.md). Sent to every open connection; session_id is the one the connection is attached to, else empty. Dismiss it with POST /api/proactive/dismiss.',
);

export const BrainMessage = Type.Union([
  SessionOpened,
  TurnStarted,
  StreamDelta,
  ToolCallEvent,
  ToolResultEvent,
  SduiPayload,
  SduiPatch,
  TextResponse,
  TelemetryOut,
  ErrorMessage,
  Pong,
  SessionClosed,
  ApprovalRequested,
  ApprovalResolved,
  TaskflowUpdate,
  ProactiveAlertFrame,
]);
export type BrainMessage = Static<typeof BrainMessage>;
export const BRAIN_TYPES = ['session_opened', 'turn_started', 'stream_delta', 'tool_call', 'tool_result', 'sdui_payload', 'sdui_patch', 'text_response', 'telemetry', 'error', 'pong', 'session_closed', 'approval_requested', 'approval_resolved', 'taskflow_update', 'proactive_alert'] as const;

export type BrainMessageOf<T extends BrainMessage['type']> = Extract<BrainMessage, { type: T }>;
export type ClientMessageOf<T extends ClientMessage['type']> = Extract<ClientMessage, { type: T }>;

/** Close codes the brain uses on /v1/session (RFC 6455 7.4; 4000-4999 are application codes). */
export const CLOSE_CODES = { goingAway: 1001, invalidData: 1007, policy: 1008, tooBig: 1009, slowConsumer: 4008, heartbeat: 4009, revoked: 4001 } as const;
