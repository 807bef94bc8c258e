import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DISCOVERY_MS, locateBrain, NoBrainError } from '../../node-agent/brain-locator';
import { readService, type DiscoveredService } from '../../mesh/mdns-records';

const service = (): DiscoveredService => {
  const read = readService({ name: 'svc-pi-1a2b3c4d', type: 'feral-brain', host: 'pi.local', port: 9090, addresses: ['10.0.0.7'], txt: { version: '1', node_path: '/v1/node', tls: '0' } });
  assert.ok('service' in read);
  return read.service;
};

void test('--brain wins, then SVC_BRAIN_URL, then mDNS (the node service, bounded)', async () => {
  const asked: number[] = [];
  const discover = async (ms: number): Promise<DiscoveredService | null> => {
    asked.push(ms);
    return service();
  };
  assert.deepEqual(await locateBrain({ flag: 'http://a:1', env: 'http://b:2', discover }), { url: 'http://a:1', via: '--brain' });
  assert.deepEqual(await locateBrain({ flag: undefined, env: 'http://b:2/', discover }), { url: 'http://b:2', via: 'SVC_BRAIN_URL' });
  assert.deepEqual(asked, []);
  assert.deepEqual(await locateBrain({ flag: undefined, env: '', discover }), { url: 'http://10.0.0.7:9090', via: 'mDNS', name: 'svc-pi-1a2b3c4d' });
  assert.deepEqual(asked, [DISCOVERY_MS]);
});

void test('nothing found over mDNS, or a bad SVC_BRAIN_URL, is a clear error naming --brain', async () => {
  await assert.rejects(locateBrain({ flag: undefined, env: undefined, discover: async () => null, timeoutMs: 5 }), (err: Error) => err instanceof NoBrainError && /no brain found on this network; give --brain http:\/\//.test(err.message));
  await assert.rejects(locateBrain({ flag: undefined, env: 'pi:9090', discover: async () => null }), /SVC_BRAIN_URL .*not an http/);
});
