// A small BlueZ on a private bus: the real org.bluez D-Bus interfaces (AgentManager1 at /org/bluez,
// Adapter1 at /org/bluez/hci0, Device1, GattService1 and GattCharacteristic1 under each device, and
// ObjectManager at /) served with dbus-next, so node-ble talks to it exactly as it talks to
// bluetoothd. The peripherals are simulated: a device object appears once discovery runs, Connect
// exports its GATT tree and then sets ServicesResolved, a characteristic records every WriteValue,
// and a value pushed while notifying goes out as PropertiesChanged on Value (BlueZ's notification).
// Tests drive the radio side: push notifications, drop a connection, take a device out of range.
import dbus from 'dbus-next';

const { Interface } = dbus.interface;
const { DBusError, Variant } = dbus;

type Options = Record<string, InstanceType<typeof Variant>>;

export interface FakeCharacteristicSpec {
  uuid: string;
  flags: string[];
  value: Buffer;
}
export interface FakeServiceSpec {
  uuid: string;
  characteristics: FakeCharacteristicSpec[];
}
export interface FakePeripheralSpec {
  address: string;
  name: string;
  services: FakeServiceSpec[];
  /** How long after discovery starts the peripheral is found (its advertising interval); default at once. */
  advertiseAfterMs?: number;
  /**
   * When the GATT tree is resolved after a connection: shortly after Connect answers (default), or
   * right after a client has read ServicesResolved as false (its reply and the change then travel
   * back to back, the timing that catches a client subscribing only after the read).
   */
  resolveServices?: 'after-connect' | 'right-after-a-read';
}

export interface FakeBluez {
  /** Every value written to a characteristic, oldest first. */
  writes(address: string, characteristic: string): Buffer[];
  /** The characteristic's value now (a write changes it, as a plain peripheral register does). */
  value(address: string, characteristic: string): Buffer;
  /** WriteValue on the characteristic gets no reply until the returned function is called. */
  holdWrites(address: string, characteristic: string): () => void;
  /** The peripheral changes a value: a notifying characteristic sends PropertiesChanged(Value). */
  notify(address: string, characteristic: string, value: Buffer): void;
  /** The link drops (Connected=false, the GATT objects go away); Connect works again afterwards. */
  dropConnection(address: string): void;
  /** While out of range, Connect fails as bluetoothd's does (org.bluez.Error.Failed). */
  setInRange(address: string, inRange: boolean): void;
  /** How many times Connect succeeded for the device. */
  connects(address: string): number;
  /** Method calls received, as `Interface.Method` strings (e.g. "Adapter1.StartDiscovery"). */
  readonly calls: readonly string[];
  /** Leaves the bus as a stopping bluetoothd does: the daemon drops org.bluez with the connection. */
  close(): Promise<void>;
}

const devicePath = (address: string): string => `/org/bluez/hci0/dev_${address.toUpperCase().replace(/:/g, '_')}`;
const hex4 = (n: number): string => n.toString(16).padStart(4, '0');

class AgentManager extends Interface {
  RegisterAgent(_agent: string, _capability: string): void {}
  UnregisterAgent(_agent: string): void {}
  RequestDefaultAgent(_agent: string): void {}
}
AgentManager.configureMembers({
  methods: { RegisterAgent: { inSignature: 'os' }, UnregisterAgent: { inSignature: 'o' }, RequestDefaultAgent: { inSignature: 'o' } },
});

/**
 * Discovery is per client, as in bluetoothd: each D-Bus connection starts and stops its own session
 * (a second StartDiscovery from the same one is InProgress), Discovering is true while any session
 * runs, and a client leaving the bus ends its session. The methods are answered by discoveryCall,
 * which sees the caller; the class declares them for introspection.
 */
class Adapter extends Interface {
  Address = '00:1A:7D:DA:71:13';
  AddressType = 'public';
  Name = 'svc-test';
  Alias = 'svc-test';
  Powered = true;
  Discovering = false;
  private readonly sessions = new Set<string>();
  constructor(private readonly rig: Rig) {
    super('org.bluez.Adapter1');
  }
  StartDiscovery(): void {
    throw new DBusError('org.bluez.Error.Failed', 'answered by discoveryCall');
  }
  StopDiscovery(): void {
    throw new DBusError('org.bluez.Error.Failed', 'answered by discoveryCall');
  }
  SetDiscoveryFilter(_filter: Options): void {
    this.rig.calls.push('Adapter1.SetDiscoveryFilter');
  }
  RemoveDevice(_device: string): void {
    this.rig.calls.push('Adapter1.RemoveDevice');
  }
  /** The error name and text for a refused call, or null when done. */
  discoveryCall(member: 'StartDiscovery' | 'StopDiscovery', client: string): [string, string] | null {
    this.rig.calls.push(`Adapter1.${member}`);
    if (member === 'StartDiscovery') {
      if (this.sessions.has(client)) return ['org.bluez.Error.InProgress', 'Operation already in progress'];
      this.sessions.add(client);
    } else {
      if (!this.sessions.delete(client)) return ['org.bluez.Error.Failed', 'No discovery started'];
    }
    this.update();
    return null;
  }
  clientLeft(client: string): void {
    if (this.sessions.delete(client)) this.update();
  }
  private update(): void {
    const discovering = this.sessions.size > 0;
    if (discovering === this.Discovering) return;
    this.Discovering = discovering;
    Interface.emitPropertiesChanged(this, { Discovering: discovering }, []);
    if (discovering) this.rig.discover(() => this.Discovering);
  }
}
Adapter.configureMembers({
  properties: {
    Address: { signature: 's', access: 'read' },
    AddressType: { signature: 's', access: 'read' },
    Name: { signature: 's', access: 'read' },
    Alias: { signature: 's' },
    Powered: { signature: 'b' },
    Discovering: { signature: 'b', access: 'read' },
  },
  methods: { StartDiscovery: {}, StopDiscovery: {}, SetDiscoveryFilter: { inSignature: 'a{sv}' }, RemoveDevice: { inSignature: 'o' } },
});

class Characteristic extends Interface {
  UUID: string;
  Service: string;
  Flags: string[];
  Value: Buffer;
  Notifying = false;
  readonly written: Buffer[] = [];
  constructor(
    private readonly rig: Rig,
    spec: FakeCharacteristicSpec,
    service: string,
  ) {
    super('org.bluez.GattCharacteristic1');
    this.UUID = spec.uuid;
    this.Service = service;
    this.Flags = spec.flags;
    this.Value = spec.value;
  }
  ReadValue(_options: Options): Buffer {
    this.rig.calls.push('GattCharacteristic1.ReadValue');
    if (!this.Flags.includes('read')) throw new DBusError('org.bluez.Error.NotPermitted', 'Read not permitted');
    return this.Value;
  }
  async WriteValue(value: Buffer, _options: Options): Promise<void> {
    this.rig.calls.push('GattCharacteristic1.WriteValue');
    if (!this.Flags.includes('write') && !this.Flags.includes('write-without-response')) throw new DBusError('org.bluez.Error.NotPermitted', 'Write not permitted');
    await this.held;
    this.written.push(Buffer.from(value));
    this.Value = Buffer.from(value);
  }
  /** Writes wait (no reply, like a peripheral that stopped answering) until the returned release is called. */
  hold(): () => void {
    let release = (): void => undefined;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.held = Promise.resolve();
      release();
    };
  }
  private held: Promise<void> = Promise.resolve();
  StartNotify(): void {
    this.rig.calls.push('GattCharacteristic1.StartNotify');
    if (!this.Flags.includes('notify')) throw new DBusError('org.bluez.Error.NotSupported', 'Notify not supported');
    this.Notifying = true;
    Interface.emitPropertiesChanged(this, { Notifying: true }, []);
  }
  StopNotify(): void {
    this.rig.calls.push('GattCharacteristic1.StopNotify');
    this.Notifying = false;
    Interface.emitPropertiesChanged(this, { Notifying: false }, []);
  }
  push(value: Buffer): void {
    this.Value = value;
    if (this.Notifying) Interface.emitPropertiesChanged(this, { Value: value }, []);
  }
}
Characteristic.configureMembers({
  properties: {
    UUID: { signature: 's', access: 'read' },
    Service: { signature: 'o', access: 'read' },
    Flags: { signature: 'as', access: 'read' },
    Value: { signature: 'ay', access: 'read' },
    Notifying: { signature: 'b', access: 'read' },
  },
  methods: {
    ReadValue: { inSignature: 'a{sv}', outSignature: 'ay' },
    WriteValue: { inSignature: 'aya{sv}' },
    StartNotify: {},
    StopNotify: {},
  },
});

class Service extends Interface {
  UUID: string;
  Primary = true;
  Device: string;
  constructor(uuid: string, device: string) {
    super('org.bluez.GattService1');
    this.UUID = uuid;
    this.Device = device;
  }
}
Service.configureMembers({
  properties: { UUID: { signature: 's', access: 'read' }, Primary: { signature: 'b', access: 'read' }, Device: { signature: 'o', access: 'read' } },
});

class Device extends Interface {
  Address: string;
  AddressType = 'random';
  Name: string;
  Alias: string;
  Paired = false;
  Connected = false;
  private resolved = false;
  private resolving = false;
  RSSI = -58;
  Adapter = '/org/bluez/hci0';
  UUIDs: string[];
  inRange = true;
  connectCount = 0;
  readonly characteristics = new Map<string, Characteristic>();
  private readonly gattPaths: Array<[string, InstanceType<typeof Interface>]> = [];
  constructor(
    private readonly rig: Rig,
    readonly spec: FakePeripheralSpec,
  ) {
    super('org.bluez.Device1');
    this.Address = spec.address.toUpperCase();
    this.Name = spec.name;
    this.Alias = spec.name;
    this.UUIDs = spec.services.map((s) => s.uuid);
    const path = devicePath(spec.address);
    let handle = 10;
    for (const s of spec.services) {
      const servicePath = `${path}/service${hex4(handle++)}`;
      this.gattPaths.push([servicePath, new Service(s.uuid, path)]);
      for (const c of s.characteristics) {
        const ch = new Characteristic(rig, c, servicePath);
        this.characteristics.set(c.uuid.toLowerCase(), ch);
        this.gattPaths.push([`${servicePath}/char${hex4(handle++)}`, ch]);
      }
    }
  }
  get ServicesResolved(): boolean {
    if (!this.resolved && this.Connected && this.spec.resolveServices === 'right-after-a-read') this.resolveSoon((fn) => process.nextTick(fn));
    return this.resolved;
  }
  Connect(): void {
    this.rig.calls.push('Device1.Connect');
    if (!this.inRange) throw new DBusError('org.bluez.Error.Failed', 'le-connection-abort-by-local');
    if (this.Connected) return;
    this.connectCount++;
    this.Connected = true;
    Interface.emitPropertiesChanged(this, { Connected: true }, []);
    // As bluetoothd: Connect answers once the link is up; service discovery goes on, then the GATT
    // tree is exported and ServicesResolved turns true.
    if (this.spec.resolveServices !== 'right-after-a-read') {
      this.resolveSoon((fn) => {
        const timer = setTimeout(() => {
          this.rig.timers.delete(timer);
          fn();
        }, 5);
        this.rig.timers.add(timer);
      });
    }
  }
  private resolveSoon(schedule: (fn: () => void) => void): void {
    if (this.resolving) return;
    this.resolving = true;
    schedule(() => {
      this.resolving = false;
      if (!this.Connected) return;
      for (const [p, iface] of this.gattPaths) this.rig.exportObject(p, iface);
      this.resolved = true;
      Interface.emitPropertiesChanged(this, { ServicesResolved: true }, []);
    });
  }
  Disconnect(): void {
    this.rig.calls.push('Device1.Disconnect');
    this.drop();
  }
  drop(): void {
    if (!this.Connected) return;
    for (const [, c] of this.characteristics) c.Notifying = false;
    this.resolved = false;
    Interface.emitPropertiesChanged(this, { ServicesResolved: false }, []);
    for (const [p, iface] of [...this.gattPaths].reverse()) this.rig.unexportObject(p, iface);
    this.Connected = false;
    Interface.emitPropertiesChanged(this, { Connected: false }, []);
  }
}
Device.configureMembers({
  properties: {
    Address: { signature: 's', access: 'read' },
    AddressType: { signature: 's', access: 'read' },
    Name: { signature: 's', access: 'read' },
    Alias: { signature: 's' },
    Paired: { signature: 'b', access: 'read' },
    Connected: { signature: 'b', access: 'read' },
    ServicesResolved: { signature: 'b', access: 'read' },
    RSSI: { signature: 'n', access: 'read' },
    Adapter: { signature: 'o', access: 'read' },
    UUIDs: { signature: 'as', access: 'read' },
  },
  methods: { Connect: {}, Disconnect: {} },
});

type ManagedObjects = Record<string, Record<string, Record<string, InstanceType<typeof Variant>>>>;

/** The exported objects, kept so ObjectManager can list them and announce changes. */
class Rig {
  readonly calls: string[] = [];
  readonly timers = new Set<NodeJS.Timeout>();
  readonly devices = new Map<string, Device>();
  private readonly objects = new Map<string, Map<string, InstanceType<typeof Interface>>>();
  objectManager: ObjectManager | null = null;
  constructor(readonly bus: dbus.MessageBus) {}
  exportObject(path: string, iface: InstanceType<typeof Interface>): void {
    this.bus.export(path, iface);
    const ifaces = this.objects.get(path) ?? new Map<string, InstanceType<typeof Interface>>();
    ifaces.set(nameOf(iface), iface);
    this.objects.set(path, ifaces);
    this.objectManager?.InterfacesAdded(path, { [nameOf(iface)]: propertiesOf(iface) });
  }
  unexportObject(path: string, iface: InstanceType<typeof Interface>): void {
    this.bus.unexport(path, iface);
    this.objects.get(path)?.delete(nameOf(iface));
    if (this.objects.get(path)?.size === 0) this.objects.delete(path);
    this.objectManager?.InterfacesRemoved(path, [nameOf(iface)]);
  }
  /** While discovery runs, each peripheral in range is found after its advertising interval. */
  discover(running: () => boolean): void {
    for (const d of this.devices.values()) {
      const path = devicePath(d.spec.address);
      const found = (): void => {
        if (running() && d.inRange && !this.objects.has(path)) this.exportObject(path, d);
      };
      if ((d.spec.advertiseAfterMs ?? 0) === 0) found();
      else this.timers.add(setTimeout(found, d.spec.advertiseAfterMs));
    }
  }
  managed(): ManagedObjects {
    const out: ManagedObjects = {};
    for (const [path, ifaces] of this.objects) {
      out[path] = {};
      for (const [name, iface] of ifaces) out[path][name] = propertiesOf(iface);
    }
    return out;
  }
}

function nameOf(iface: InstanceType<typeof Interface>): string {
  return (iface as unknown as { $name: string }).$name;
}

function propertiesOf(iface: InstanceType<typeof Interface>): Record<string, InstanceType<typeof Variant>> {
  const declared = (iface as unknown as { $properties?: Record<string, { signature: string }> }).$properties ?? {};
  const values = iface as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(declared).map(([name, p]) => [name, new Variant(p.signature, values[name])]));
}

class ObjectManager extends Interface {
  constructor(private readonly rig: Rig) {
    super('org.freedesktop.DBus.ObjectManager');
  }
  GetManagedObjects(): ManagedObjects {
    return this.rig.managed();
  }
  InterfacesAdded(path: string, interfaces: Record<string, Record<string, InstanceType<typeof Variant>>>): [string, typeof interfaces] {
    return [path, interfaces];
  }
  InterfacesRemoved(path: string, interfaces: string[]): [string, string[]] {
    return [path, interfaces];
  }
}
ObjectManager.configureMembers({
  methods: { GetManagedObjects: { outSignature: 'a{oa{sa{sv}}}' } },
  signals: { InterfacesAdded: { signature: 'oa{sa{sv}}' }, InterfacesRemoved: { signature: 'oas' } },
});

function characteristicOf(rig: Rig, address: string, uuid: string): Characteristic {
  const c = rig.devices.get(address.toUpperCase())?.characteristics.get(uuid.toLowerCase());
  if (!c) throw new Error(`the fake has no characteristic ${uuid} on ${address}`);
  return c;
}

function deviceOf(rig: Rig, address: string): Device {
  const d = rig.devices.get(address.toUpperCase());
  if (!d) throw new Error(`the fake has no device ${address}`);
  return d;
}

/** Connects to the bus at `busAddress`, takes org.bluez and serves one adapter (hci0) with these peripherals. */
export async function startFakeBluez(busAddress: string, peripherals: readonly FakePeripheralSpec[]): Promise<FakeBluez> {
  const bus = dbus.sessionBus({ busAddress });
  bus.on('error', (err: unknown) => {
    // The bus going away when a test closes it is expected; anything else fails loudly in the test's output.
    if (!(err instanceof Error && /ECONNRESET|EPIPE|closed stream/.test(err.message))) console.error('fake bluez bus error', err);
  });
  const rig = new Rig(bus);
  for (const p of peripherals) rig.devices.set(p.address.toUpperCase(), new Device(rig, p));
  rig.objectManager = new ObjectManager(rig);
  bus.export('/', rig.objectManager);
  rig.exportObject('/org/bluez', new AgentManager('org.bluez.AgentManager1'));
  const adapter = new Adapter(rig);
  rig.exportObject('/org/bluez/hci0', adapter);
  bus.addMethodHandler((msg: dbus.Message): boolean => {
    if (msg.path !== '/org/bluez/hci0' || msg.interface !== 'org.bluez.Adapter1' || (msg.member !== 'StartDiscovery' && msg.member !== 'StopDiscovery')) return false;
    const refused = adapter.discoveryCall(msg.member, msg.sender);
    bus.send(refused ? dbus.Message.newError(msg as unknown as string, ...refused) : dbus.Message.newMethodReturn(msg, '', []));
    return true;
  });
  const daemon = await bus.getProxyObject('org.freedesktop.DBus', '/org/freedesktop/DBus');
  daemon.getInterface('org.freedesktop.DBus').on('NameOwnerChanged', (name: string, _old: string, owner: string) => {
    if (owner === '') adapter.clientLeft(name);
  });
  await bus.requestName('org.bluez', dbus.NameFlag.DO_NOT_QUEUE);
  let closed = false;
  return {
    writes: (address, uuid) => characteristicOf(rig, address, uuid).written.map((b) => Buffer.from(b)),
    value: (address, uuid) => Buffer.from(characteristicOf(rig, address, uuid).Value),
    notify: (address, uuid, value) => characteristicOf(rig, address, uuid).push(value),
    holdWrites: (address, uuid) => characteristicOf(rig, address, uuid).hold(),
    dropConnection: (address) => deviceOf(rig, address).drop(),
    setInRange: (address, inRange) => {
      deviceOf(rig, address).inRange = inRange;
    },
    connects: (address) => deviceOf(rig, address).connectCount,
    calls: rig.calls,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const t of rig.timers) clearTimeout(t);
      bus.disconnect();
      // Nothing may arrive after this: dbus-next would answer a late method call on the closed stream and throw.
      (bus as unknown as { _connection: { stream: { destroy(): void } } })._connection.stream.destroy();
    },
  };
}

// The simulated thermometer the BLE tests use: temperature (0x2A6E in Environmental Sensing) notifying
// int16le centi-degrees, and a writable LED register (a uint8) in a vendor service.
export const THERMO_ADDRESS = 'C4:7C:8D:6A:12:F0';
export const ENV_SENSING = '0000181a-0000-1000-8000-00805f9b34fb';
export const TEMPERATURE = '00002a6e-0000-1000-8000-00805f9b34fb';
export const LED_SERVICE = '6e400001-b5a3-f393-e0a9-e50e24dcca9e';
export const LED = '6e400002-b5a3-f393-e0a9-e50e24dcca9e';

/** A temperature as the characteristic carries it: int16le hundredths of a degree. */
export function centi(celsius: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16LE(Math.round(celsius * 100));
  return b;
}

export const thermometer = (address = THERMO_ADDRESS, name = 'Thermo-7', advertiseAfterMs = 0): FakePeripheralSpec => ({
  address,
  name,
  advertiseAfterMs,
  services: [
    { uuid: ENV_SENSING, characteristics: [{ uuid: TEMPERATURE, flags: ['read', 'notify'], value: centi(21.5) }] },
    { uuid: LED_SERVICE, characteristics: [{ uuid: LED, flags: ['read', 'write'], value: Buffer.from([0]) }] },
  ],
});
