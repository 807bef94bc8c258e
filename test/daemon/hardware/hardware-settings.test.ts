// The hardware section of settings.json (daemon/hardware/hardware-settings.ts) as the brain reads it:
// defaults, and values out of bounds refused with their JSON path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { parseSettings, settingsFormat, SettingsError } from '../../../daemon/config/load-settings';
import { hardwareCapability } from '../../../daemon/hardware/hardware-capability';

const format = settingsFormat(CAPABILITIES);
type Sections = { hardware: Record<string, unknown> };

void test('settings: the hardware section\'s defaults, and values out of bounds refused with their path', () => {
  assert.ok(CAPABILITIES.includes(hardwareCapability));
  const hardware = (parseSettings({}, 'settings.json', format) as unknown as Sections).hardware;
  assert.equal(hardware.heartbeat_ms, 10_000);
  assert.equal(hardware.generic_tools, true);
  assert.deepEqual(hardware.opt_in, { camera: false, microphone: false });
  assert.equal(hardware.actuator_rate_per_minute, 10);
  assert.deepEqual(hardware.local_agent, { enabled: false });
  const bad: [Record<string, unknown>, string][] = [
    [{ heartbeat_ms: 999 }, '/hardware/heartbeat_ms'],
    [{ actuator_rate_per_minute: 0 }, '/hardware/actuator_rate_per_minute'],
    [{ alerts: { thresholds: [{ reading: 'celsius', above: 'hot' }] } }, '/hardware/alerts/thresholds/0/above'],
    [{ opt_in: { camera: 'yes' } }, '/hardware/opt_in/camera'],
    [{ drivers: [] }, '/hardware'],
  ];
  for (const [section, path] of bad) {
    assert.throws(
      () => parseSettings({ hardware: section }, 'settings.json', format),
      (err: unknown) => err instanceof SettingsError && err.message.includes(path),
      path,
    );
  }
});

