import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_PAIR_TIMEOUT_S, checkNodeId, parseAgentArgs } from '../../node-agent/command-line';

void test('commands: none or run is run, help anywhere is help, pair with every option in both spellings', () => {
  assert.deepEqual(parseAgentArgs([]), { kind: 'run', options: {} });
  assert.deepEqual(parseAgentArgs(['run']), { kind: 'run', options: {} });
  assert.deepEqual(parseAgentArgs(['run', '--config', '/etc/svc-node/config.json', '--brain=http://10.0.0.2:9090', '--node-id', 'rpi-hall', '--name', 'Hall', '--key-dir', '/k']), {
    kind: 'run',
    options: { config: '/etc/svc-node/config.json', brain: 'http://10.0.0.2:9090', nodeId: 'rpi-hall', name: 'Hall', keyDir: '/k' },
  });
  assert.deepEqual(parseAgentArgs(['--config', 'c.json']), { kind: 'run', options: { config: 'c.json' } }, 'run is the default command, flags and all');
  assert.deepEqual(parseAgentArgs(['pair', '--help']), { kind: 'help' });
  assert.deepEqual(parseAgentArgs(['pair']), { kind: 'pair', options: { timeoutSeconds: DEFAULT_PAIR_TIMEOUT_S } });
  assert.deepEqual(parseAgentArgs(['pair', '--brain', 'http://10.0.0.2:9090/', '--node-id=rpi-garden', '--name', 'Garden Pi', '--key-dir', '/k', '--timeout=30']), {
    kind: 'pair',
    options: { brain: 'http://10.0.0.2:9090', nodeId: 'rpi-garden', name: 'Garden Pi', keyDir: '/k', timeoutSeconds: 30 },
  });
});

void test('usage errors name the problem', () => {
  const usage = (args: string[]): string => {
    const c = parseAgentArgs(args);
    assert.equal(c.kind, 'usage', JSON.stringify(args));
    return c.kind === 'usage' ? c.message : '';
  };
  assert.match(usage(['fly']), /unknown command "fly"/);
  assert.match(usage(['run', 'now']), /unexpected argument "now"/);
  assert.match(usage(['run', '--timeout', '5']), /unknown option --timeout/);
  assert.match(usage(['run', '--config', '']), /--config needs a file/);
  assert.match(usage(['run', '--node-id', 'a b']), /--node-id: node id "a b" is not/);
  assert.match(usage(['pair', '--brain']), /--brain needs a value/);
  assert.match(usage(['pair', '--colour', 'red']), /unknown option --colour/);
  assert.match(usage(['pair', 'extra']), /unexpected argument "extra"/);
  assert.match(usage(['pair', '--timeout', '1', '--timeout', '2']), /given twice/);
  assert.match(usage(['pair', '--timeout', '0']), /--timeout 0: expected whole seconds/);
  assert.match(usage(['pair', '--timeout', '1.5']), /expected whole seconds/);
  assert.match(usage(['pair', '--timeout', '86401']), /expected whole seconds/);
  assert.match(usage(['pair', '--node-id', 'a b']), /--node-id: node id "a b" is not/);
  assert.match(usage(['pair', '--node-id', 'x'.repeat(129)]), /is not/);
  assert.match(usage(['pair', '--name', ' ']), /--name must be/);
  assert.match(usage(['pair', '--name', 'x'.repeat(65)]), /--name must be/);
  assert.match(usage(['pair', '--name', 'a\u0007b']), /--name must be/);
  assert.match(usage(['pair', '--key-dir', '']), /--key-dir needs a directory/);
  assert.match(usage(['pair', '--brain', 'pi.local:9090']), /not an http/);
  assert.match(usage(['pair', '--brain', 'not a url']), /is not a URL/);
  assert.match(usage(['pair', '--brain', 'http://u:p@pi:9090']), /address only/);
  assert.match(usage(['pair', '--brain', 'http://pi:9090/?x=1']), /address only/);
});

void test('property: any argv parses to one of the four commands without throwing; pair options are always valid', () => {
  const word = fc.oneof(fc.constantFrom('pair', 'run', '--brain', '--node-id', '--name', '--key-dir', '--timeout', '--timeout=5', '--brain=http://x', 'http://10.1.2.3:9090', '30', ''), fc.string({ maxLength: 20 }));
  fc.assert(
    fc.property(fc.array(word, { maxLength: 8 }), (args) => {
      const c = parseAgentArgs(args);
      assert.ok(['run', 'help', 'pair', 'usage'].includes(c.kind));
      if (c.kind !== 'pair') return;
      const o = c.options;
      assert.ok(Number.isInteger(o.timeoutSeconds) && o.timeoutSeconds >= 1 && o.timeoutSeconds <= 86_400);
      if (o.nodeId !== undefined) assert.equal(checkNodeId(o.nodeId), undefined);
      if (o.brain !== undefined) assert.match(o.brain, /^https?:\/\/[^/?#]+(\/.*[^/])?$/);
    }),
  );
});
