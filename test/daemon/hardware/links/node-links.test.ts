// NodeUnreachable: the reason a request to a node got no response, as the device layer reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeUnreachable } from '../../../../daemon/hardware/links/node-links';

void test('each reason has its own message naming the node; the error is typed by name and class', () => {
  const messages = new Set<string>();
  for (const reason of ['offline', 'timeout', 'disconnected', 'stopping'] as const) {
    const err = new NodeUnreachable('pi-1', reason);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'NodeUnreachable');
    assert.equal(err.nodeId, 'pi-1');
    assert.equal(err.reason, reason);
    assert.match(err.message, /^node pi-1: /);
    messages.add(err.message);
  }
  assert.equal(messages.size, 4);
  assert.equal(new NodeUnreachable('x', 'offline').message, 'node x: device offline');
});
