// The phone-bridge command line: each command's options, defaults and refusals, without a process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BRIDGE_TTL_S, DEFAULT_CHAT_TIMEOUT_S, parseBridgeArgs } from '../../phone-bridge/command-line';

const URL_ = 'svc://pair?v=1&kind=node&brain=brn_x&token=t&exp=1&pin=0&url=http%3A%2F%2F10.0.0.2%3A9090';

void test('help, pair, run and chat with their defaults and options', () => {
  for (const help of [[], ['help'], ['--help'], ['-h']]) assert.deepEqual(parseBridgeArgs(help), { kind: 'help' });
  assert.deepEqual(parseBridgeArgs(['pair', URL_]), { kind: 'pair', url: URL_, platform: 'android' });
  assert.deepEqual(parseBridgeArgs(['pair', URL_, '--key-dir', '/k', '--name', 'Ada phone', '--pin=0042', '--platform', 'ios']), { kind: 'pair', url: URL_, platform: 'ios', keyDir: '/k', name: 'Ada phone', pin: '0042' });
  assert.deepEqual(parseBridgeArgs(['run']), { kind: 'run', platform: 'android', bridgeTtlSeconds: DEFAULT_BRIDGE_TTL_S });
  assert.deepEqual(parseBridgeArgs(['run', '--brain', 'http://127.0.0.1:9090/', '--node-id', 'phone-a', '--bridge-id', 'b1', '--peripherals', 'p.json', '--bridge-ttl', '60', '--session', 's']), {
    kind: 'run',
    brain: 'http://127.0.0.1:9090',
    nodeId: 'phone-a',
    platform: 'android',
    bridgeTtlSeconds: 60,
    bridgeId: 'b1',
    peripherals: 'p.json',
    session: 's',
  });
  assert.deepEqual(parseBridgeArgs(['chat', 'is the bulb on?', '--session', 's1']), { kind: 'chat', text: 'is the bulb on?', session: 's1', timeoutSeconds: DEFAULT_CHAT_TIMEOUT_S });
});

void test('refusals name the problem', () => {
  const usage = (args: string[]): string => {
    const c = parseBridgeArgs(args);
    assert.equal(c.kind, 'usage', JSON.stringify(c));
    return c.kind === 'usage' ? c.message : '';
  };
  assert.equal(usage(['fly']), 'unknown command "fly"');
  assert.equal(usage(['pair']), 'pair takes one argument: the svc://pair URL');
  assert.equal(usage(['pair', URL_, '--brain', 'http://x']), 'unknown option --brain');
  assert.equal(usage(['pair', URL_, '--pin', '12']), '--pin is 4 to 8 digits');
  assert.equal(usage(['pair', URL_, '--platform', 'symbian']), '--platform is ios or android');
  assert.equal(usage(['run', '--brain']), '--brain needs a value');
  assert.equal(usage(['run', '--brain', 'ftp://x']), '--brain "ftp://x" is not an http:// or https:// URL');
  assert.equal(usage(['run', '--node-id', 'a b']), '--node-id "a b" is not [A-Za-z0-9._:-]{1,128}');
  assert.equal(usage(['run', '--bridge-ttl', '0']), '--bridge-ttl is a whole number of seconds, 1 to 86400');
  assert.equal(usage(['run', '--name', 'a', '--name', 'b']), '--name is given twice');
  assert.equal(usage(['run', 'extra']), 'run takes no arguments (got "extra")');
  assert.equal(usage(['chat', 'hi']), 'chat needs --session');
  assert.equal(usage(['chat', '--session', 's']), 'chat takes one argument: the message (quote it)');
  assert.equal(usage(['chat', 'hi', '--session', 's', '--timeout', 'soon']), '--timeout is a whole number of seconds, 1 to 3600');
});
