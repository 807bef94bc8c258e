// The mesh capability in a whole in-process brain: its settings section and defaults, and that a
// brain listening on loopback (localhost mode, the default) opens no mDNS socket at all — checked on
// this process's own file descriptors, so nothing is sent to the machine's network. Announcing for
// real is test/e2e/mesh-mdns.test.ts, inside network namespaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { parseSettings, settingsFormat, SettingsError } from '../../../daemon/config/load-settings';
import { MESH, meshCapability, interfaceAddresses } from '../../../daemon/discovery/discovery-capability';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { startParts } from '../../../daemon/kernel/parts';
import { pino } from 'pino';

/** Inodes of this process's UDP sockets bound to port 5353 (IPv4 and IPv6), from /proc. */
function mdnsSocketsOfThisProcess(): number {
  const bound = new Set<string>();
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(':14E9')) bound.add(cols[9]!);
    }
  }
  let mine = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // closed while listing (the readdir handle itself)
      throw err;
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m && bound.has(m[1]!)) mine += 1;
  }
  return mine;
}

void test('the mesh capability is listed, with its settings section and defaults', () => {
  assert.ok(CAPABILITIES.includes(meshCapability));
  assert.equal(meshCapability.name, MESH);
  const format = settingsFormat(CAPABILITIES);
  assert.deepEqual((parseSettings({}, 'settings.json', format) as unknown as Record<string, unknown>).mesh, { advertise: true, advertise_sync: true });
  assert.throws(() => parseSettings({ mesh: { advertise: 'yes' } }, 'settings.json', format), SettingsError);
  assert.throws(() => parseSettings({ mesh: { advertize: false } }, 'settings.json', format), SettingsError);
});

void test('a brain on loopback (localhost mode) opens no mDNS socket and announces nothing', async (t) => {
  const before = mdnsSocketsOfThisProcess();
  const heard: BrainEvent[] = [];
  const { brain } = await inProcessBrain(t, { start: false });
  brain.bus.on('test', (e) => {
    if (e.type === 'mdns_advertised' || e.type === 'mdns_withdrawn') heard.push(e);
  });
  await startParts(brain.parts, pino({ level: 'silent' }));
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(brain.listener.addresses().length > 0, 'the brain listens');
  assert.equal(mdnsSocketsOfThisProcess(), before);
  assert.deepEqual(heard, []);
});

void test('the machine addresses it compares leave loopback out', () => {
  for (const address of interfaceAddresses()) assert.ok(address !== '127.0.0.1' && address !== '::1', address);
});
