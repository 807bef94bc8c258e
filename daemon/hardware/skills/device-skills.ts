// The hand-written device skills (issue 14: SVC_GENERIC_HARDWARE_SKILLS=0; docs/hardware.md
// "Hand-written skills"): with settings hardware.generic_tools false the brain generates no
// hwdev_<device>__<action> tools and offers these instead, under the hardware capability's owner:
//   device_switch, device_climate, device_signal, device_thermostat
// With generic_tools true none is registered: the generated tools already cover every action, and two
// tools for one action would only make the model choose.
//
// The base skills are registered for the whole run (so "there is no thermostat here" is an answer,
// not a missing tool). The more cautious variants of an actuating skill (`_confirmed`, `_dangerous`;
// skill-binding.ts "Safety classes") are registered only while some device of the skill's kind has an
// action of that class, and follow device_registered / device_removed on the bus. A variant removed
// while one of its calls waits for approval leaves that request pending (approving it answers 503)
// until a device of that class comes back.
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/capability';
import type { EventBus } from '../../kernel/event-bus';
import type { BrainEvent } from '../../kernel/events';
import type { Part } from '../../kernel/parts';
import type { Tool } from '../../kernel/tool';
import type { ToolRegistry } from '../../kernel/tool-registry';
import type { Hardware } from '../hardware';
import { ACTUATOR_FAMILIES, type ActuatorDeps } from './actuator-skills';
import { climateSkill } from './climate-skill';
import { classOf, SKILL_LEVELS, variantName, type SkillDevice } from './skill-binding';

export type SkillHardware = Pick<Hardware, 'connected' | 'specs' | 'runAction' | 'history'>;

export interface DeviceSkillsDeps {
  hardware: SkillHardware;
  tools: ToolRegistry;
  owner: string;
  bus: EventBus<BrainEvent>;
  clock: Clock;
  logger: Logger;
  /** settings hardware.generic_tools: true registers no skill. */
  genericTools: boolean;
  /** The wait between on and off of a blink (tests); default setTimeout. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** Every device with its spec, liveness and last readings (times as epoch ms), by id. */
export function skillDevices(hardware: Pick<Hardware, 'connected' | 'specs'>): SkillDevice[] {
  const connected = new Map(hardware.connected().map((c) => [c.device_id, c]));
  return hardware
    .specs()
    .sort((a, b) => a.deviceId.localeCompare(b.deviceId))
    .map((spec) => {
      const c = connected.get(spec.deviceId);
      const readings: SkillDevice['readings'] = Object.fromEntries(Object.entries(c?.readings ?? {}).map(([name, r]) => [name, { value: r.value, at: Date.parse(r.at) }]));
      return { spec, online: c?.online ?? false, readings };
    });
}

export class DeviceSkills {
  private readonly registered = new Map<string, Tool>();
  private running = false;
  private listening = false;

  constructor(private readonly deps: DeviceSkillsDeps) {}

  /** The tool names registered now. */
  names(): string[] {
    return [...this.registered.keys()];
  }

  part(): Part {
    return { name: 'device-skills', start: () => this.start(), stop: () => this.stop() };
  }

  start(): void {
    if (this.deps.genericTools) return;
    this.running = true;
    if (!this.listening) {
      this.listening = true;
      this.deps.bus.on(this.deps.owner, (event) => {
        if (this.running && (event.type === 'device_registered' || event.type === 'device_removed')) this.sync();
      });
    }
    this.sync();
  }

  stop(): void {
    this.running = false;
    for (const name of this.registered.keys()) this.deps.tools.unregister(name);
    this.registered.clear();
  }

  /** Registers the base skills and the variants some device needs now; unregisters the others. */
  sync(): void {
    const actuators: ActuatorDeps = {
      devices: () => skillDevices(this.deps.hardware),
      runAction: (deviceId, action, params, origin) => this.deps.hardware.runAction(deviceId, action, params, origin),
      sleep: this.deps.sleep ?? defaultSleep,
    };
    const wanted = new Map<string, () => Tool>();
    wanted.set('device_climate', () => climateSkill({ devices: actuators.devices, history: (id, reading) => this.deps.hardware.history(id, reading), clock: this.deps.clock }));
    const specs = this.deps.hardware.specs();
    for (const family of ACTUATOR_FAMILIES) {
      const levels = new Set(specs.filter(family.bound).map((spec) => classOf(spec, family.actions(spec))));
      for (const level of SKILL_LEVELS) if (level === 'active' || levels.has(level)) wanted.set(variantName(family.base, level), () => family.make(actuators, level));
    }
    for (const name of [...this.registered.keys()]) {
      if (wanted.has(name)) continue;
      this.deps.tools.unregister(name);
      this.registered.delete(name);
    }
    for (const [name, make] of wanted) {
      if (this.registered.has(name)) continue;
      if (this.deps.tools.get(name)) {
        this.deps.logger.warn({ tool: name, owner: this.deps.tools.ownerOf(name) }, 'a device skill\'s name is taken by another tool; the skill is not offered');
        continue;
      }
      const tool = make();
      this.deps.tools.register(this.deps.owner, tool);
      this.registered.set(name, tool);
    }
  }
}
