// The access capability in a whole brain: its settings section (defaults, refusals), and the
// access_mode event announced once the listener is bound, with where it listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSettings, settingsFormat, SettingsError } from '../../../daemon/config/load-settings';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { accessCapability } from '../../../daemon/access/access-capability';
import { defineCapability } from '../../../daemon/kernel/capability';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { inProcessBrain } from '../../helpers/assembled-brain';

void test('settings: the access section has defaults and refuses what it does not know', () => {
  const format = settingsFormat(CAPABILITIES);
  assert.ok(CAPABILITIES.includes(accessCapability));
  assert.deepEqual((parseSettings({}, 'settings.json', format) as unknown as { access: unknown }).access, { mode: 'localhost', remote: false, address_poll_seconds: 30 });
  assert.throws(() => parseSettings({ access: { mode: 'public' } }, 'settings.json', format), SettingsError);
  assert.throws(() => parseSettings({ access: { tunnel: 'ngrok' } }, 'settings.json', format), SettingsError);
});

void test('the brain announces access_mode once it listens: localhost, no URLs, on 127.0.0.1 and ::1', async (t) => {
  const events: BrainEvent[] = [];
  const listen = defineCapability({ name: 'listen-to-access', create: (context) => (context.bus.on('test', (e) => events.push(e)), {}) });
  const { brain } = await inProcessBrain(t, { capabilities: [...CAPABILITIES, listen] });
  const announced = events.filter((e) => e.type === 'access_mode');
  assert.equal(announced.length, 1);
  assert.deepEqual({ ...announced[0], at: 0 }, { type: 'access_mode', mode: 'localhost', urls: [], at: 0 });
  assert.deepEqual(brain.listener.addresses().map((a) => a.host), ['127.0.0.1', '::1']);
});
