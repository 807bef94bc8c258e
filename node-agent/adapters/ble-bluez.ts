// BLE through BlueZ over D-Bus (Linux), with node-ble. node-ble's createBluetooth() opens the system
// bus itself and never listens for its 'error' event, so on a machine without D-Bus the connection
// error would crash the agent (ARCHITECTURE.md, decided dependencies). Here the session opens the bus
// itself, listens for errors first, and only then builds node-ble's Bluetooth on it; node-ble and its
// own dbus-next (whose Variant node-ble's calls must carry) load on the first session, i.e. only when
// a BLE device is configured. dbus-next never fails a call whose connection died (it waits forever),
// so every call here races the session's end and a timeout.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as DbusNextModule from 'dbus-next';
import type { MessageBus } from 'dbus-next';
import type NodeBle from 'node-ble';
import type { AdapterLog } from './adapter';
import { BleNotFound, BleUnavailable, describeTarget, guarded, matchesTarget, type BleCharacteristic, type BlePeripheral, type BleSession, type BleTarget, type OpenBleSession } from './ble-transport';

type DbusNext = typeof DbusNextModule;
type BluetoothClass = new (bus: MessageBus) => NodeBle.Bluetooth;

export interface BluezOptions {
  /** A D-Bus address; absent ⇒ the system bus (DBUS_SYSTEM_BUS_ADDRESS, else /var/run/dbus/system_bus_socket, read by dbus-next). */
  busAddress?: string;
  /** The BlueZ adapter ("hci0"); absent ⇒ the first one. */
  adapterName?: string;
  /** Bound on one D-Bus call (ms). */
  callTimeoutMs?: number;
  /** Bound on Connect plus service resolution (ms); bluetoothd itself gives up after ~20 s. */
  connectTimeoutMs?: number;
  /** How often a scan looks at the devices BlueZ has found (ms). */
  scanPollMs?: number;
  log: AdapterLog;
}

const DEFAULTS = { callTimeoutMs: 10_000, connectTimeoutMs: 30_000, scanPollMs: 250 };

let loaded: { dbus: DbusNext; Bluetooth: BluetoothClass } | null = null;

/** node-ble's Bluetooth class and the dbus-next node-ble itself resolves (not a second copy). */
function loadNodeBle(): { dbus: DbusNext; Bluetooth: BluetoothClass } {
  if (loaded) return loaded;
  const requireHere = createRequire(import.meta.url);
  let main: string;
  try {
    main = requireHere.resolve('node-ble');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') throw new BleUnavailable('node-ble is not installed (npm install node-ble)', true);
    throw err;
  }
  const fromNodeBle = createRequire(main);
  loaded = { dbus: fromNodeBle('dbus-next') as DbusNext, Bluetooth: fromNodeBle('./Bluetooth.js') as BluetoothClass };
  return loaded;
}

const isDbusError = (err: unknown, type: string): boolean => err instanceof Error && (err as Error & { type?: unknown }).type === type;
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Ends with `reason` once: the session's end, raced by every call. */
class SessionEnd {
  private readonly controller = new AbortController();
  private readonly listeners: Array<(reason: BleUnavailable) => void> = [];
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  end(reason: BleUnavailable): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    for (const l of this.listeners.splice(0)) l(reason);
  }
  onEnd(listener: (reason: BleUnavailable) => void): void {
    if (this.controller.signal.aborted) listener(this.controller.signal.reason as BleUnavailable);
    else this.listeners.push(listener);
  }
}

/** Opens a BlueZ session per call (one D-Bus connection each). */
export function bluezSessions(options: BluezOptions): OpenBleSession {
  const o = { ...DEFAULTS, ...options };
  return async () => {
    const { dbus, Bluetooth } = loadNodeBle();
    const end = new SessionEnd();
    let bus: MessageBus;
    try {
      bus = o.busAddress === undefined ? dbus.systemBus() : dbus.sessionBus({ busAddress: o.busAddress });
    } catch (err) {
      // A malformed address throws at once.
      throw new BleUnavailable(`no D-Bus system bus (${messageOf(err)}); BLE needs BlueZ over D-Bus`);
    }
    bus.on('error', (err: unknown) => {
      o.log.debug({ err: messageOf(err) }, 'ble: D-Bus connection error');
      end.end(new BleUnavailable(`D-Bus: ${messageOf(err)}`));
    });
    watchStream(bus, end);
    const session = new BluezSession(bus, end, o, dbus.Variant);
    try {
      await session.open(new Bluetooth(bus));
    } catch (err) {
      await session.close();
      if (err instanceof BleUnavailable) throw err;
      throw new BleUnavailable(messageOf(err));
    }
    return session;
  };
}

/** dbus-next's socket (it keeps it to itself). */
const streamOf = (bus: MessageBus): { once(event: 'close', fn: () => void): void; destroy(): void } | undefined =>
  (bus as unknown as { _connection?: { stream?: { once(event: 'close', fn: () => void): void; destroy(): void } } })._connection?.stream;

/** A closed socket under dbus-next (the daemon stopped) ends the session; dbus-next itself says nothing until the next call. */
function watchStream(bus: MessageBus, end: SessionEnd): void {
  streamOf(bus)?.once('close', () => end.end(new BleUnavailable('D-Bus: the connection closed')));
}

/**
 * Adapter1's discovery methods, called directly: node-ble's startDiscovery() refuses while the adapter
 * is already discovering, but bluetoothd keeps one discovery session per D-Bus client (several devices,
 * several sessions, each scanning until it stops its own).
 */
interface DiscoveryMethods {
  SetDiscoveryFilter(filter: Record<string, DbusNextModule.Variant>): Promise<void>;
  StartDiscovery(): Promise<void>;
  StopDiscovery(): Promise<void>;
}

class BluezSession implements BleSession {
  private adapter: NodeBle.Adapter | null = null;
  private discovery: DiscoveryMethods | null = null;
  private adapterName = '';
  private closed = false;
  constructor(
    private readonly bus: MessageBus,
    private readonly end: SessionEnd,
    private readonly o: Required<Omit<BluezOptions, 'busAddress' | 'adapterName'>> & Pick<BluezOptions, 'adapterName'>,
    private readonly Variant: typeof DbusNextModule.Variant,
  ) {}

  private call<T>(work: Promise<T>, what: string, signal?: AbortSignal): Promise<T> {
    return guarded(work, what, this.o.callTimeoutMs, this.end.signal, signal);
  }

  async open(bluetooth: NodeBle.Bluetooth): Promise<void> {
    await this.connected();
    await this.watchBluez();
    let names: string[];
    try {
      names = await this.call(bluetooth.adapters(), 'list Bluetooth adapters');
    } catch (err) {
      if (isDbusError(err, 'org.freedesktop.DBus.Error.ServiceUnknown') || isDbusError(err, 'org.freedesktop.DBus.Error.NameHasNoOwner'))
        throw new BleUnavailable('BlueZ is not running (no org.bluez on the system bus)');
      throw err;
    }
    const name = this.o.adapterName ?? names[0];
    if (name === undefined) throw new BleUnavailable('no Bluetooth adapter (BlueZ lists none)');
    if (!names.includes(name)) throw new BleUnavailable(`no Bluetooth adapter ${name} (BlueZ has ${names.join(', ')})`);
    const adapter = await this.call(bluetooth.getAdapter(name), `open adapter ${name}`);
    if (!(await this.call(adapter.isPowered(), `adapter ${name} Powered`))) throw new BleUnavailable(`Bluetooth adapter ${name} is powered off`);
    const object = await this.call(this.bus.getProxyObject('org.bluez', `/org/bluez/${name}`), `adapter ${name}`);
    this.discovery = object.getInterface('org.bluez.Adapter1') as unknown as DiscoveryMethods;
    this.adapter = adapter;
    this.adapterName = name;
  }

  /** Resolves once the bus answered Hello; rejects with BleUnavailable when it cannot be reached. */
  private connected(): Promise<void> {
    if ((this.bus as unknown as { name: string | null }).name) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onConnect = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.bus.off('connect', onConnect);
        reject(new BleUnavailable(`no answer from the D-Bus system bus within ${this.o.callTimeoutMs} ms`));
      }, this.o.callTimeoutMs);
      this.bus.once('connect', onConnect);
      this.end.onEnd((reason) => {
        clearTimeout(timer);
        this.bus.off('connect', onConnect);
        reject(new BleUnavailable(`no D-Bus system bus (${reason.message.replace(/^D-Bus: /, '')}); BLE needs BlueZ over D-Bus`));
      });
    });
  }

  /** bluetoothd leaving the bus (stopped, restarted) ends the session: its objects are gone with it. */
  private async watchBluez(): Promise<void> {
    const daemon = await this.call(this.bus.getProxyObject('org.freedesktop.DBus', '/org/freedesktop/DBus'), 'watch org.bluez');
    daemon.getInterface('org.freedesktop.DBus').on('NameOwnerChanged', (name: string, _old: string, owner: string) => {
      if (name === 'org.bluez' && owner === '') this.end.end(new BleUnavailable('BlueZ left the system bus (bluetoothd stopped)'));
    });
  }

  onLost(listener: (reason: BleUnavailable) => void): void {
    this.end.onEnd(listener);
  }

  async find(target: BleTarget, timeoutMs: number, signal: AbortSignal): Promise<BlePeripheral> {
    const adapter = this.adapter;
    const discovery = this.discovery;
    if (!adapter || !discovery) throw new Error('find before open');
    await this.call(discovery.SetDiscoveryFilter({ Transport: new this.Variant('s', 'le') }), 'SetDiscoveryFilter');
    let started = true;
    try {
      await this.call(discovery.StartDiscovery(), 'StartDiscovery');
    } catch (err) {
      // This connection's session already runs (it never does: one scan per session at a time).
      if (!isDbusError(err, 'org.bluez.Error.InProgress')) throw err;
      started = false;
    }
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = await this.lookup(adapter, target, signal);
        if (found) return found;
        if (Date.now() >= deadline) throw new BleNotFound(`${describeTarget(target)} not found in ${timeoutMs / 1000} s of scanning`);
        await guarded(sleep(this.o.scanPollMs), 'scan', this.o.scanPollMs + 1000, this.end.signal, signal);
      }
    } finally {
      if (started && !this.end.signal.aborted) await this.stopDiscovery(discovery);
    }
  }

  private async stopDiscovery(discovery: DiscoveryMethods): Promise<void> {
    try {
      await this.call(discovery.StopDiscovery(), 'StopDiscovery');
    } catch (err) {
      // The scan result stands; bluetoothd ends this client's discovery when the session's connection closes.
      this.o.log.warn({ err: messageOf(err) }, 'ble: StopDiscovery failed');
    }
  }

  private async lookup(adapter: NodeBle.Adapter, target: BleTarget, signal: AbortSignal): Promise<BlePeripheral | null> {
    const addresses = await this.call(adapter.devices(), 'list devices', signal);
    for (const address of addresses) {
      if (target.address !== undefined && address.toUpperCase() !== target.address.toUpperCase()) continue;
      const device = await this.call(adapter.getDevice(address), `device ${address}`, signal);
      const name = await this.nameOf(device);
      if (matchesTarget(target, address, name)) return new BluezPeripheral(device, address, name, this.end, this.o, this.bus, `/org/bluez/${this.adapterName}/dev_${address.toUpperCase().replace(/:/g, '_')}`);
    }
    return null;
  }

  /** The advertised name, or the alias BlueZ derives; null when the device advertised none. */
  private async nameOf(device: NodeBle.Device): Promise<string | null> {
    try {
      return await this.call(device.getName(), 'Name');
    } catch (err) {
      if (!isDbusError(err, 'org.freedesktop.DBus.Error.InvalidArgs')) throw err;
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.end.end(new BleUnavailable('session closed'));
    this.bus.disconnect();
    // disconnect() only ends the writing side: a method call still arriving would be answered on the
    // closed stream, and dbus-next's handler throws out of its socket callback (an uncaught exception).
    streamOf(this.bus)?.destroy();
    this.o.log.debug({ adapter: this.adapterName }, 'ble: D-Bus session closed');
  }
}

/** org.freedesktop.DBus.Properties as dbus-next's proxy gives it. */
interface PropertiesProxy {
  Get(iface: string, name: string): Promise<DbusNextModule.Variant>;
  on(event: 'PropertiesChanged', listener: (iface: string, changed: Record<string, DbusNextModule.Variant>) => void): void;
  off(event: 'PropertiesChanged', listener: (iface: string, changed: Record<string, DbusNextModule.Variant>) => void): void;
}

class BluezPeripheral implements BlePeripheral {
  private gatt: NodeBle.GattServer | null = null;
  private readonly dropped = new SessionEnd();
  constructor(
    private readonly device: NodeBle.Device,
    readonly address: string,
    readonly name: string | null,
    private readonly end: SessionEnd,
    private readonly o: Required<Omit<BluezOptions, 'busAddress' | 'adapterName'>>,
    private readonly bus: MessageBus,
    private readonly path: string,
  ) {
    this.end.onEnd((reason) => this.dropped.end(reason));
  }

  private call<T>(work: Promise<T>, what: string, ms = this.o.callTimeoutMs): Promise<T> {
    return guarded(work, what, ms, this.dropped.signal);
  }

  async connect(): Promise<void> {
    this.device.on('disconnect', () => this.dropped.end(new BleUnavailable(`${this.address} disconnected`)));
    const resolved = await this.servicesResolved();
    await this.call(this.device.connect(), `connect ${this.address}`, this.o.connectTimeoutMs);
    await this.call(resolved(), `resolve services of ${this.address}`, this.o.connectTimeoutMs);
    this.gatt = await this.call(this.device.gatt(), `services of ${this.address}`);
  }

  /**
   * Listens for ServicesResolved before Connect, and returns a wait that ends once it is true.
   * node-ble's gatt() reads the property and only then subscribes, so a change arriving in the same
   * read from the socket as that reply is missed and it waits forever; here the listener comes first.
   */
  private async servicesResolved(): Promise<() => Promise<void>> {
    const object = await this.call(this.bus.getProxyObject('org.bluez', this.path), `device ${this.address}`);
    const props = object.getInterface('org.freedesktop.DBus.Properties') as unknown as PropertiesProxy;
    let onChange = (_iface: string, _changed: Record<string, DbusNextModule.Variant>): void => undefined;
    const changed = new Promise<void>((resolve) => {
      onChange = (iface, changes) => {
        if (iface === 'org.bluez.Device1' && changes.ServicesResolved?.value === true) resolve();
      };
      props.on('PropertiesChanged', onChange);
    });
    this.dropped.onEnd(() => props.off('PropertiesChanged', onChange));
    return async () => {
      try {
        const now = (await this.call(props.Get('org.bluez.Device1', 'ServicesResolved'), 'ServicesResolved')).value === true;
        if (!now) await changed;
      } finally {
        props.off('PropertiesChanged', onChange);
      }
    };
  }

  async characteristic(service: string, uuid: string): Promise<BleCharacteristic> {
    if (!this.gatt) throw new Error('characteristic before connect');
    const services = await this.gatt.services();
    if (!services.includes(service)) throw new Error(`${this.address} has no service ${service}`);
    const s = await this.gatt.getPrimaryService(service);
    if (!(await s.characteristics()).includes(uuid)) throw new Error(`${this.address} has no characteristic ${uuid} in service ${service}`);
    const c = await s.getCharacteristic(uuid);
    const flags = await this.call(c.getFlags(), `flags of ${uuid}`);
    return {
      flags,
      read: () => this.call(c.readValue(), `read ${uuid}`),
      write: (value, mode) => this.call(c.writeValue(value, { type: mode }), `write ${uuid}`),
      subscribe: async (onValue) => {
        c.on('valuechanged', onValue);
        await this.call(c.startNotifications(), `notify ${uuid}`);
      },
    };
  }

  onDisconnect(listener: () => void): void {
    this.dropped.onEnd(() => listener());
  }

  async disconnect(): Promise<void> {
    if (this.end.signal.aborted) return;
    try {
      await guarded(this.device.disconnect(), `disconnect ${this.address}`, this.o.callTimeoutMs, this.end.signal);
    } catch (err) {
      // The session is closed right after; BlueZ drops the link when its last user leaves anyway.
      this.o.log.debug({ err: messageOf(err) }, 'ble: Disconnect failed');
    }
    this.dropped.end(new BleUnavailable(`${this.address} disconnected`));
  }
}
