// What a node_register (or a phone's peripheral_bridge_register) declares, as device manifests the
// device layer turns into devices and tools (node-protocol.md "Device self-description";
// docs/hardware.md "Devices"). A register carries one manifest, a list of them (a node-agent board
// with several devices), or none: then the node itself is one device whose actions are derived from
// its `capabilities` by the table below.
import type { ActionParam, BridgedPeripheral, DeviceAction, DeviceManifest, NodeRegister, NormalizedAction, TransportKind } from '../../../protocol/node';
import { normalizeAction } from '../../../protocol/node';

/** A device as the device layer keeps it: the manifest's facts with its actions normalised. */
export interface DeviceSpec {
  deviceId: string;
  name: string;
  type: string;
  /** How the brain reaches it: `local` (the brain-local node-agent), `mesh` (another board's node), `phone_ble` (a phone bridge). */
  transport: TransportKind;
  /** The device's own link to its node as the manifest names it (serial, ble, …), or null. */
  bus: string | null;
  capabilities: string[];
  actions: NormalizedAction[];
  /** The manifest as declared (or derived), stored so a restarted brain lists the device. */
  manifest: DeviceManifest;
}

const onOff = (cap: string): DeviceAction => ({
  name: `set_${cap}`,
  category: 'actuator',
  permission_tier: 'active',
  capability: cap,
  description: `Switch the ${cap} on or off`,
  params: [{ name: 'on', type: 'boolean', required: true, description: 'true: on, false: off' }],
});

const pulse = (name: string, cap: string, what: string): DeviceAction => ({
  name,
  category: 'actuator',
  permission_tier: 'active',
  capability: cap,
  description: what,
  params: [{ name: 'duration_ms', type: 'integer', minimum: 1, maximum: 10_000, default: 200, description: 'How long, in milliseconds' }],
});

const read = (cap: string, privileged = false): DeviceAction => ({
  name: `read_${cap}`,
  category: 'sensor',
  permission_tier: privileged ? 'privileged' : 'passive',
  capability: cap,
  description: `Read the ${cap.replace(/_/g, ' ')} now`,
  params: [],
});

/**
 * Actions derived from a capability when a node declares no manifest. On/off actuators get
 * `set_<cap> {on}`, pulse actuators `buzz`/`vibrate {duration_ms}`, a display `show_text {text}`,
 * sensors `read_<cap>` (passive), camera `capture_image` and microphone `record_audio` (opt-in tiers).
 * Capabilities too open-ended to guess an action for (gpio, shell, filesystem, keyboard, applescript,
 * telemetry, passive_sensor, active_actuator, unknown strings) derive none: such a node must declare a manifest.
 */
export const DERIVED_ACTIONS: Readonly<Record<string, DeviceAction>> = {
  relay: onOff('relay'),
  led: onOff('led'),
  motor: onOff('motor'),
  valve: onOff('valve'),
  buzzer: pulse('buzz', 'buzzer', 'Sound the buzzer'),
  haptic: pulse('vibrate', 'haptic', 'Vibrate'),
  display: {
    name: 'show_text',
    category: 'display',
    permission_tier: 'active',
    capability: 'display',
    description: 'Show a line of text on the display',
    params: [{ name: 'text', type: 'string', required: true, description: 'The text to show' }],
  },
  camera: { name: 'capture_image', category: 'sensor', permission_tier: 'privileged', capability: 'camera', description: 'Take a picture', params: [] },
  microphone: { ...pulse('record_audio', 'microphone', 'Record a short audio clip'), category: 'sensor', permission_tier: 'privileged' },
  ...Object.fromEntries(['temperature', 'heart_rate', 'spo2', 'uv', 'ambient_light', 'steps', 'battery', 'gps', 'accelerometer', 'gyroscope'].map((cap) => [cap, read(cap)])),
};

export function deriveActions(capabilities: readonly string[]): DeviceAction[] {
  const out: DeviceAction[] = [];
  for (const cap of new Set(capabilities)) {
    const action = DERIVED_ACTIONS[cap];
    if (action) out.push(action);
  }
  return out;
}

/** A node id as a device id (`[A-Za-z0-9_]`, at most 64): other characters become `_`. */
export const deviceIdOfNode = (nodeId: string): string => nodeId.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64);

/** The manifests a register declares; when it declares none, the node itself as one device derived from its capabilities. */
export function manifestsOf(register: NodeRegister): DeviceManifest[] {
  const declared = register.device_manifest;
  if (Array.isArray(declared)) return declared;
  if (declared) return [declared];
  return [
    {
      device_id: deviceIdOfNode(register.node_id),
      device_type: register.node_type,
      name: register.name ?? register.node_id,
      capabilities: [...register.capabilities],
      actions: deriveActions(register.capabilities),
      ...(register.manufacturer === undefined ? {} : { manufacturer: register.manufacturer }),
      ...(register.model === undefined ? {} : { model: register.model }),
    },
  ];
}

/** A bridged BLE peripheral's manifest: its own, or one derived from its capabilities; always transport phone_ble. */
export function manifestOfPeripheral(peripheral: BridgedPeripheral): DeviceManifest {
  const own = peripheral.manifest;
  const capabilities = own?.capabilities ?? peripheral.capabilities ?? [];
  return {
    ...(own ?? {}),
    device_id: peripheral.device_id,
    device_type: own?.device_type ?? peripheral.kind,
    name: own?.name ?? peripheral.device_id,
    capabilities: [...capabilities],
    actions: own?.actions ?? deriveActions(capabilities),
    transport: { kind: 'phone_ble' },
  };
}

/**
 * A manifest as a DeviceSpec: aliases resolved (normalizeAction), actions without a name dropped, a
 * repeated action name kept once (the first). The transport is how the brain reaches the device —
 * phone_ble for a bridged peripheral, else `fallback` (local for the brain-local node, mesh for any
 * other) — and the manifest's own transport kind (serial, ble) is its bus.
 */
export function specOf(manifest: DeviceManifest, fallback: TransportKind): DeviceSpec {
  const actions: NormalizedAction[] = [];
  const seen = new Set<string>();
  for (const declared of manifest.actions) {
    const action = normalizeAction(declared);
    if (!action || seen.has(action.name)) continue;
    seen.add(action.name);
    actions.push({ ...action, params: uniqueParams(action.params) });
  }
  return {
    deviceId: manifest.device_id,
    name: manifest.name,
    type: manifest.device_type,
    transport: manifest.transport?.kind === 'phone_ble' ? 'phone_ble' : fallback,
    bus: manifest.transport?.kind ?? null,
    capabilities: [...new Set(manifest.capabilities ?? [])],
    actions,
    manifest,
  };
}

function uniqueParams(params: readonly ActionParam[]): ActionParam[] {
  const seen = new Set<string>();
  return params.filter((p) => !seen.has(p.name) && Boolean(seen.add(p.name)));
}
