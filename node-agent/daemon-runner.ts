// Runs the delivered daemon as a driver device of this node (daemon-driver.ts; docs/node-agent.md
// "Daemons"): on each new held version, the previous driver device is stopped and removed, the new
// one is described in the sandbox, added to the node's devices (the array the link reads) and started,
// and the node registers again on its open socket so the brain learns the device and makes its
// hwdev_* tools (the brain re-acknowledges a node_register of the same node_id). The driver code and
// the sandbox load with import() on the first activation.
import type { AdapterLog, AdapterSink, DeviceAdapter } from './adapters/adapter';
import type { HeldDaemon } from './daemon-store';
import type { DaemonOutcome } from './daemon-sync';
import type * as DriverModuleExports from './daemon-driver';

type DriverModule = typeof DriverModuleExports;

export interface DaemonRunnerDeps {
  /** The node's devices, shared with the link: the driver's device is added to and removed from it. */
  devices: DeviceAdapter[];
  /** Where a device reports (the link's readings and the status line). */
  sinkFor(deviceId: string): AdapterSink;
  /** Registers again with the brain (link.ts reregister): the devices changed. */
  reregister(): void;
  log: AdapterLog;
  /** The driver module (tests pass one with a fake sandbox). */
  load?: () => Promise<DriverModule>;
}

export class DaemonRunner {
  private driver: DeviceAdapter | null = null;
  private sandbox: ReturnType<DriverModule['driverSandbox']> | null = null;

  constructor(private readonly deps: DaemonRunnerDeps) {}

  /** Replaces the running driver with the one `held` describes: running, or failed with why. */
  async activate(held: HeldDaemon): Promise<DaemonOutcome> {
    const driverModule = await (this.deps.load ?? (() => import('./daemon-driver')))();
    const removed = await this.remove();
    this.sandbox ??= driverModule.driverSandbox();
    let next: DeviceAdapter;
    try {
      next = await driverModule.loadDriver(held, { sandbox: this.sandbox, log: this.deps.log });
    } catch (err) {
      if (!(err instanceof driverModule.DriverError)) throw err;
      this.deps.log.error({ daemon: held.offer.node_id, version: held.offer.version, err: err.message }, 'the daemon\'s driver cannot run');
      if (removed) this.deps.reregister();
      return { state: 'failed', error: err.message };
    }
    const id = next.manifest.device_id;
    if (this.deps.devices.some((d) => d.manifest.device_id === id)) {
      if (removed) this.deps.reregister();
      return { state: 'failed', error: `describe(): device_id ${id} is already a device of this node's config` };
    }
    this.deps.devices.push(next);
    await next.start(this.deps.sinkFor(id));
    this.driver = next;
    this.deps.log.info({ daemon: held.offer.node_id, version: held.offer.version, device: id }, 'the daemon\'s driver runs');
    this.deps.reregister();
    return { state: 'running' };
  }

  /** Stops the driver and ends the sandbox's worker. */
  async stop(): Promise<void> {
    await this.remove();
    await this.sandbox?.close();
    this.sandbox = null;
  }

  /** Takes the driver's device off the node; false when there was none. */
  private async remove(): Promise<boolean> {
    const driver = this.driver;
    if (driver === null) return false;
    this.driver = null;
    const at = this.deps.devices.indexOf(driver);
    if (at >= 0) this.deps.devices.splice(at, 1);
    await driver.stop();
    return true;
  }
}
