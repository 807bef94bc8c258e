// mesh/brain-url.ts: the brain's address as the node-agent and the phone bridge take it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseBrainUrl } from '../../mesh/brain-url';

void test('http(s) base URLs keep a path prefix and lose trailing slashes; anything else is a problem that says why', () => {
  assert.deepEqual(parseBrainUrl('https://pi.local:9443/svc//'), { url: 'https://pi.local:9443/svc' });
  assert.deepEqual(parseBrainUrl('http://[fd00::2]:9090'), { url: 'http://[fd00::2]:9090' });
  assert.deepEqual(parseBrainUrl('https://brain.example/svc/'), { url: 'https://brain.example/svc' });
  assert.deepEqual(parseBrainUrl('http://u:p@x'), { problem: '"http://u:p@x": give the brain\'s address only (no user, query or fragment)' });
  assert.deepEqual(parseBrainUrl('http://x/?a=1'), { problem: '"http://x/?a=1": give the brain\'s address only (no user, query or fragment)' });
  assert.deepEqual(parseBrainUrl('nope'), { problem: '"nope" is not a URL (give http://host:port)' });
  assert.deepEqual(parseBrainUrl('ftp://x'), { problem: '"ftp://x" is not an http:// or https:// URL' });
  fc.assert(fc.property(fc.string({ maxLength: 200 }), (s) => void parseBrainUrl(s)), { numRuns: 500 });
});
