// What starts an active skill besides a person (docs/skills.md "Triggers"): a schedule (a cron
// expression in the brain's local time, or every N seconds) or an event of the brain's bus by its type
// (`device_telemetry`, `node_online`, `approval_resolved`…), whose fields become the run's params. A
// skill runs at most once at a time from its triggers: a schedule tick or an event that comes while
// the previous run is still going is skipped (and logged), so a slow skill cannot pile up runs.
import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { SkillManifest } from '../../protocol/skills';
import type { EventBus } from '../kernel/event-bus';
import type { BrainEvent } from '../kernel/events';

/** Starts one run; resolves when it has ended. */
export type TriggeredRun = (skillId: string, trigger: string, params: Record<string, unknown>) => Promise<void>;

interface Armed {
  timers: { stop(): void }[];
  events: string[];
  running: boolean;
}

const OWNER = 'skills';

export class SkillTriggers {
  private readonly armed = new Map<string, Armed>();
  private listening = false;

  constructor(
    private readonly bus: EventBus<BrainEvent>,
    private readonly run: TriggeredRun,
    private readonly logger: Logger,
  ) {}

  /** Arms a skill's schedule and event triggers (replacing what it had). */
  arm(manifest: SkillManifest): void {
    this.disarm(manifest.id);
    const armed: Armed = { timers: [], events: [], running: false };
    for (const trigger of manifest.triggers) {
      if (trigger.type === 'schedule' && 'cron' in trigger) {
        const job = new Cron(trigger.cron, { protect: true }, () => this.fire(manifest.id, armed, 'schedule', {}));
        armed.timers.push(job);
      } else if (trigger.type === 'schedule') {
        const timer = setInterval(() => this.fire(manifest.id, armed, 'schedule', {}), trigger.every_seconds * 1000);
        timer.unref();
        armed.timers.push({ stop: () => clearInterval(timer) });
      } else if (trigger.type === 'event') {
        armed.events.push(trigger.event);
      }
    }
    this.armed.set(manifest.id, armed);
    if (armed.events.length > 0) this.listen();
  }

  disarm(id: string): void {
    const armed = this.armed.get(id);
    if (!armed) return;
    for (const timer of armed.timers) timer.stop();
    this.armed.delete(id);
  }

  stop(): void {
    for (const id of [...this.armed.keys()]) this.disarm(id);
    if (this.listening) this.bus.off(OWNER);
    this.listening = false;
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.bus.on(OWNER, (event) => {
      for (const [id, armed] of this.armed) {
        if (armed.events.includes(event.type)) this.fire(id, armed, `event:${event.type}`, { ...event });
      }
    });
  }

  private fire(id: string, armed: Armed, trigger: string, params: Record<string, unknown>): void {
    if (armed.running) {
      this.logger.info({ skill: id, trigger }, 'skill still running from its previous trigger; this one is skipped');
      return;
    }
    armed.running = true;
    this.run(id, trigger, params)
      .catch((err: unknown) => this.logger.error({ err, skill: id, trigger }, 'a triggered skill run failed'))
      .finally(() => {
        armed.running = false;
      });
  }
}
