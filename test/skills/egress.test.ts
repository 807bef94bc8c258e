// skills/egress.ts: a real HTTP server on 127.0.0.1 is refused by default and reached when the manifest
// allows private addresses and http; `localhost` and IP literal spellings of loopback are refused; a
// name is checked on every address it resolves to and the connection goes to the checked address (a
// resolver that answers differently the second time changes nothing); redirects come back unfollowed;
// the allow-list, the scheme, the response size cap and the timeout hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkDestination, createEgress, hostAllowed, nonPublicAddress, type LookupAll } from '../../skills/egress';
import { PolicyRefusal } from '../../skills/host-functions';

async function listen(t: { after: (fn: () => void) => void }, handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

const fixed = (...addresses: string[]): LookupAll => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

test('non-public addresses are named; public ones pass', () => {
  const cases: [string, string | null][] = [
    ['127.0.0.1', 'loopback'], ['127.8.9.10', 'loopback'], ['::1', 'loopback'], ['10.1.2.3', 'private'], ['172.31.0.1', 'private'],
    ['192.168.1.1', 'private'], ['169.254.169.254', 'link-local'], ['fe80::1', 'link-local'], ['fd00::1', 'private'], ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'], ['224.0.0.1', 'multicast'], ['ff02::1', 'multicast'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:a9fe:a9fe', 'link-local'],
    ['8.8.8.8', null], ['172.32.0.1', null], ['2606:4700::1111', null], ['::ffff:8.8.8.8', null],
  ];
  for (const [address, what] of cases) assert.equal(nonPublicAddress(address), what, address);
});

test('the allow-list matches exact names and names below a *. pattern', () => {
  assert.ok(hostAllowed('api.example.com', ['api.example.com']));
  assert.ok(hostAllowed('a.b.example.com', ['*.example.com']));
  assert.ok(!hostAllowed('example.com', ['*.example.com']));
  assert.ok(!hostAllowed('evilexample.com', ['*.example.com']));
  assert.ok(!hostAllowed('api.example.com.evil.net', ['api.example.com']));
});

test('a server on 127.0.0.1 is refused by default and reached when private and http are allowed', async (t) => {
  const port = await listen(t, (_req, res) => res.end('hello'));
  const url = `http://127.0.0.1:${port}/`;
  await assert.rejects(createEgress({ allow: ['127.0.0.1'], http: true })({ method: 'GET', url }), (e) => e instanceof PolicyRefusal && /loopback/.test(e.message));
  await assert.rejects(createEgress({ allow: ['127.0.0.1'], private: true })({ method: 'GET', url }), (e) => e instanceof PolicyRefusal && /https only/.test(e.message));
  const res = await createEgress({ allow: ['127.0.0.1'], private: true, http: true })({ method: 'GET', url });
  assert.equal(res.status, 200);
  assert.equal(res.body, 'hello');
});

test('localhost and IP literal spellings of loopback are refused', async () => {
  const policy = { allow: ['localhost', '127.0.0.1', '::ffff:7f00:1', '::1'], http: true };
  for (const url of ['http://localhost/', 'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::1]/']) {
    await assert.rejects(createEgress(policy)({ method: 'GET', url }), (e) => e instanceof PolicyRefusal && /loopback/.test(e.message), url);
  }
});

test('a name is refused when any of its addresses is not public, and not on the allow-list at all', async () => {
  await assert.rejects(checkDestination('https://api.example.com/', { allow: ['api.example.com'] }, fixed('93.184.215.14', '10.0.0.5')), /private/);
  await assert.rejects(checkDestination('https://other.example.com/', { allow: ['api.example.com'] }, fixed('93.184.215.14')), /not in the manifest's network allow-list/);
  await assert.rejects(checkDestination('ftp://api.example.com/', { allow: ['api.example.com'] }, fixed('93.184.215.14')), PolicyRefusal);
  const ok = await checkDestination('https://api.example.com/x', { allow: ['api.example.com'] }, fixed('93.184.215.14'));
  assert.equal(ok.target.address, '93.184.215.14');
});

test('the connection goes to the checked address: a second, different answer is never asked for', async (t) => {
  const port = await listen(t, (req, res) => res.end(`host ${req.headers.host}`));
  let asked = 0;
  const rebinding: LookupAll = async () => (asked++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]);
  const res = await createEgress({ allow: ['svc.test'], private: true, http: true }, { lookup: rebinding })({ method: 'GET', url: `http://svc.test:${port}/` });
  assert.equal(res.body, `host svc.test:${port}`);
  assert.equal(asked, 1);
});

test('a redirect is returned, not followed', async (t) => {
  const port = await listen(t, (_req, res) => {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
    res.end();
  });
  const res = await createEgress({ allow: ['127.0.0.1'], private: true, http: true })({ method: 'GET', url: `http://127.0.0.1:${port}/` });
  assert.equal(res.status, 302);
  assert.equal(res.headers.location, 'http://169.254.169.254/latest/meta-data');
});

test('http_post sends its body; a response past the cap and a silent server fail (not as policy)', async (t) => {
  const port = await listen(t, (req, res) => {
    if (req.url === '/silent') return;
    if (req.url === '/big') return res.end('x'.repeat(2048));
    req.pipe(res);
  });
  const egress = createEgress({ allow: ['127.0.0.1'], private: true, http: true }, { maxResponseBytes: 1024, timeoutMs: 200 });
  assert.equal((await egress({ method: 'POST', url: `http://127.0.0.1:${port}/echo`, body: '{"a":1}' })).body, '{"a":1}');
  await assert.rejects(egress({ method: 'GET', url: `http://127.0.0.1:${port}/big` }), (e) => !(e instanceof PolicyRefusal) && /larger than 1024/.test((e as Error).message));
  await assert.rejects(egress({ method: 'GET', url: `http://127.0.0.1:${port}/silent` }), (e) => !(e instanceof PolicyRefusal) && /within 200 ms/.test((e as Error).message));
});
