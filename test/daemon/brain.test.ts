// A whole brain assembled in-process (daemon/brain.ts) with the real capability list plus one
// test-only capability, which contributes what any capability can: a settings section, a store
// migration, a route, a tool and a metric. Adding it touched nothing but this file — the contract
// docs/architecture.md promises ("Adding a capability").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { CAPABILITIES } from '../../daemon/capabilities';
import { parseSettings, settingsFormat } from '../../daemon/config/load-settings';
import { defineCapability } from '../../daemon/kernel/capability';
import { defineTool } from '../../daemon/kernel/tool';
import { routes } from '../../daemon/http/route-kit';
import { inProcessBrain } from '../helpers/assembled-brain';

const greeter = defineCapability({
  name: 'greeter',
  settings: Type.Object({ greeting: Type.String({ default: 'hello' }) }),
  settingsMigrations: [{ version: 2, description: 'salutation is now greeting', up: (s) => ({ ...s, greeter: { greeting: (s.greeter as { salutation?: string } | undefined)?.salutation ?? 'hello' } }) }],
  create: ({ store, metrics, bus }, settings) => {
    const greeted = metrics.counter('greeter', { name: 'svc_greeter_greetings_total', help: 'Greetings given' });
    let turns = 0;
    bus.on('greeter', (event) => {
      if (event.type === 'turn_finished') turns++;
    });
    return {
      migrations: [{ version: 1, description: 'greetings', up: 'CREATE TABLE greeter_greetings (name TEXT NOT NULL)' }],
      routes: [
        routes(async (app) => {
          app.post('/api/greeter/:name', { schema: { params: Type.Object({ name: Type.String({ maxLength: 40 }) }) } }, async (request) => {
            await store.write((db) => db.run('INSERT INTO greeter_greetings (name) VALUES (?)', [request.params.name]));
            greeted.inc();
            return { text: `${settings.greeting}, ${request.params.name}`, count: store.get<{ n: number }>('SELECT COUNT(*) AS n FROM greeter_greetings')?.n, turns };
          });
        }),
      ],
      tools: [defineTool({ spec: { name: 'greet', description: 'Greets someone.', parameters: Type.Object({ name: Type.String() }) }, safety: 'passive', run: async ({ name }) => ({ summary: `${settings.greeting}, ${name}` }) })],
    };
  },
});

void test('a capability contributes its settings section, migration, route, tool and metric to an assembled brain', async (t) => {
  const capabilities = [...CAPABILITIES, greeter];
  // A version-1 file in the capability's old spelling: its settings migration raises it.
  const { brain, token } = await inProcessBrain(t, { capabilities, file: { greeter: { salutation: 'ahoy' } } });
  assert.deepEqual(brain.capabilities, [...CAPABILITIES.map((c) => c.name), 'greeter']);

  const auth = { authorization: `Bearer ${token}` };
  const first = await brain.app.inject({ method: 'POST', url: '/api/greeter/Ada', headers: auth });
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(first.json(), { text: 'ahoy, Ada', count: 1, turns: 0 });
  assert.equal((await brain.app.inject({ method: 'POST', url: '/api/greeter/Ada' })).statusCode, 401, 'a capability route needs the token like any other');

  assert.equal(brain.tools.ownerOf('greet'), 'greeter');
  assert.equal(brain.tools.ownerOf('remember'), 'memory');
  assert.equal(brain.tools.ownerOf('identity'), 'identity');
  assert.equal(brain.tools.ownerOf('status'), 'agent');
  assert.deepEqual(brain.tools.removeOwner('greeter'), ['greet']);
  assert.equal(brain.tools.get('greet'), undefined);

  const metrics = await brain.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
  assert.match(metrics.body, /^svc_greeter_greetings_total 1$/m);
  assert.match(metrics.body, /^svc_tool_denials_total\{tool="greet"\} 0$/m, 'a tool registered by a capability is declared like every tool');
  assert.equal(brain.metrics.registry.owners().get('svc_greeter_greetings_total'), 'greeter');

  // The bus carries the agent's events to capabilities.
  const command = await brain.app.inject({ method: 'POST', url: '/api/dashboard/command', headers: auth, payload: { text: 'hello' } });
  assert.equal(command.statusCode, 200, command.body);
  const second = await brain.app.inject({ method: 'POST', url: '/api/greeter/Bob', headers: auth });
  assert.deepEqual(second.json(), { text: 'ahoy, Bob', count: 2, turns: 1 });
});

void test('settings: an unknown capability section is refused, a capability section gets its defaults, and the result is deep-frozen', () => {
  const format = settingsFormat([...CAPABILITIES, greeter]);
  const s = parseSettings({}, 'settings.json', format) as ReturnType<typeof parseSettings> & { greeter: { greeting: string } };
  assert.equal(s.greeter.greeting, 'hello');
  assert.equal(s.version, 2);
  assert.ok(Object.isFrozen(s.greeter) && Object.isFrozen(s.server));
  assert.throws(() => parseSettings({ version: 2, greeter: { greeting: 'hi', extra: 1 } }, 'settings.json', format), /greeter\/extra/);
  assert.throws(() => parseSettings({ greeter: {} }, 'settings.json', settingsFormat(CAPABILITIES)), /greeter/);
  assert.throws(() => parseSettings({ version: 3 }, 'settings.json', format), /newer svc/);
});
