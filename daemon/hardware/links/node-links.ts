// The seam inside the hardware capability between the /v1/node link layer (node-hub.ts: sockets,
// handshake, heartbeats, limits; node-protocol.md) and the device layer (device-registry.ts:
// manifests, tools, commands, telemetry). The link layer knows frames and sockets and nothing of
// tools; the device layer knows devices and commands and nothing of sockets.
import type { ActionRequest, ActionResponse, ChatRequest, DeviceEvent, NodeHeartbeat, NodeRegister, PeripheralBridgeRegister } from '../../../protocol/node';

/** A node whose node_register was accepted. */
export interface RegisteredNode {
  readonly nodeId: string;
  /** The register payload as validated (unknown fields kept). */
  readonly register: NodeRegister;
  /** The heartbeat interval the ack gives the node. */
  readonly heartbeatMs: number;
  /** Epoch ms when the socket registered. */
  readonly connectedAt: number;
}

/** What the device layer answers a registration with: what goes into node_ack. */
export interface RegistrationDecision {
  /** Capability strings granted (node_ack.granted_capabilities lists these plus `actionNames`). */
  readonly granted: readonly string[];
  readonly denied: readonly string[];
  /** Names of the actions registered for the node's devices (some SDKs check an action's name against granted_capabilities). */
  readonly actionNames: readonly string[];
}

/** What the link layer tells the device layer. Every call happens after validation; `at` is epoch ms. */
export interface NodeHubListener {
  registered(node: RegisteredNode): RegistrationDecision;
  heartbeat(nodeId: string, beat: NodeHeartbeat, at: number): void;
  /** A device_event, or legacy telemetry turned into device_events (one per reading group). Media over its limit never gets here. */
  deviceEvent(nodeId: string, event: DeviceEvent, at: number): void;
  bridgeRegistered(nodeId: string, bridge: PeripheralBridgeRegister, at: number): void;
  /** chat_request from a phone peer; `reply` sends chat_response frames. */
  chatRequest(nodeId: string, request: ChatRequest, reply: (text: string, final: boolean) => void): void;
  /** The node's socket is gone (closed, stale, superseded — `superseded` is then true and a new socket already registered). */
  disconnected(nodeId: string, reason: string, at: number, superseded: boolean): void;
}

/** Why a request to a node did not get a response. */
export class NodeUnreachable extends Error {
  constructor(
    readonly nodeId: string,
    readonly reason: 'offline' | 'timeout' | 'disconnected' | 'stopping',
  ) {
    super(`node ${nodeId}: ${reason === 'offline' ? 'device offline' : reason === 'timeout' ? 'no response in time' : reason === 'disconnected' ? 'the node disconnected before it answered' : 'the brain is stopping'}`);
    this.name = 'NodeUnreachable';
  }
}

/** What the device layer asks of the link layer. */
export interface NodeLinks {
  /** Whether the node has a registered socket now. */
  online(nodeId: string): boolean;
  /**
   * Sends hup_action_request and resolves with the node's hup_action_response. Rejects with
   * NodeUnreachable: `offline` at once when no socket is registered (never waits for one),
   * `timeout` after `request.timeout_ms` (default 5000) plus a grace of 1 s, `disconnected` when
   * the socket closes first, `stopping` when the brain stops.
   */
  request(nodeId: string, request: ActionRequest): Promise<ActionResponse>;
  /** Closes a node's socket with an error frame and a close code (a revoked key: 1001, then 4001). False when not connected. */
  disconnect(nodeId: string, code: number, reason: string): boolean;
}
