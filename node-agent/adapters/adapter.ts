// The contract between the node-agent's link (link.ts) and the code that talks to one device over a
// transport (serial.ts, ble.ts). An adapter owns its device: it opens it, reconnects on its own when
// the device disappears (a USB unplug, a BLE peripheral out of range), reports readings and state
// changes to its sink, and runs the actions its manifest declares. The link never sees a port or a
// GATT handle; an adapter never sees a socket (STYLE.md 6: hardware behind a port).
import type { DeviceManifest } from '../../protocol/node';

export type AdapterState = 'connected' | 'connecting' | 'unavailable';

export interface AdapterStatus {
  state: AdapterState;
  /** One line for a person: "open /dev/ttyUSB0 at 115200", "port gone (ENOENT); retrying in 3.2 s". */
  detail: string;
}

/** Where an adapter reports to. Calls never throw and may come at any time after start(). */
export interface AdapterSink {
  /** A reading: becomes a device_event {device_id, event_type, data, ts} on the link. */
  reading(eventType: string, data: Record<string, unknown>): void;
  /** The device's state changed (connected, connecting while it reconnects, unavailable for good). */
  status(state: AdapterState, detail: string): void;
}

export interface DeviceAdapter {
  /** What the brain registers for this device (transport.kind serial | ble). */
  readonly manifest: DeviceManifest;
  /**
   * Opens (or starts scanning for) the device and returns once the attempt is under way; it does not
   * wait for the device. From then on the adapter reconnects by itself until stop(). A machine without
   * the transport (no Bluetooth, no D-Bus, no serialport binding) is status 'unavailable', not a rejection;
   * start() rejects only for a programming error.
   */
  start(sink: AdapterSink): Promise<void>;
  /**
   * Runs one of the manifest's actions. Resolves with its result object; rejects with AdapterError
   * (a message for the brain's hup_action_response.error) when the device refuses, does not answer,
   * is not connected ("device unavailable", at once, never waiting for a reconnect) or `signal` aborts.
   */
  run(action: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  status(): AdapterStatus;
  /** Closes the device and stops reconnecting; pending run() calls reject. Idempotent. */
  stop(): Promise<void>;
}

/** An action that failed in a way the brain should hear about (its message goes on the wire). */
export class AdapterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdapterError';
  }
}

/** The message every adapter gives for an action while its device is not connected. */
export const DEVICE_UNAVAILABLE = 'device unavailable';

/** The logger an adapter is given (a pino child logger satisfies it). */
export interface AdapterLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
