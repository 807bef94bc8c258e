// mDNS end to end with real multicast (issue 13, docs/mesh.md), never on the machine's network: the
// built brain runs in one network namespace this test creates, a peer namespace is linked to it by a
// veth pair (test/helpers/mdns-netns.ts). From the peer: a mesh/mdns.ts browser (what node-agents use)
// finds the brain's services, reaches /health at the address it resolved and hears the goodbye at
// shutdown; avahi-daemon there lists the brain with avahi-browse -rpt and resolves its .local name.
// From the brain's namespace, next to the running brain on the same UDP port: the browser resolves a
// service avahi-publish announces. The access mode starts and stops the announcements. Needs root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from '../helpers/brain-process';
import { isRoot, runToolOk } from '../helpers/external-tools';
import { createMeshNet, runBrowserChildIfAsked, startAvahi, startBrainIn, startBrowser, type BrowserEvent, type MeshNet } from '../helpers/mdns-netns';

const SCRIPT = fileURLToPath(import.meta.url);
const SKIP = isRoot() ? false : 'needs root to create network namespaces (ip netns add); CI runs as root';

const isUp = (kind: string, brainName?: string) => (e: BrowserEvent) => e.event === 'up' && e.service?.kind === kind && (brainName === undefined || e.service.name === brainName);

/** The instance name the brain logged in its "mDNS: advertising" line is not logged; it is svc-<host>-<id8>. */
const instanceOf = (brainId: string, events: BrowserEvent[]): string | undefined => events.find((e) => e.service?.brainId === brainId)?.service?.name;

/** avahi-browse -rpt lines of resolved services (`=`), split into their fields. */
const resolved = (out: string): string[][] => out.split('\n').filter((l) => l.startsWith('=;')).map((l) => l.split(';'));

if (!(await runBrowserChildIfAsked())) {
  void test('the brain is announced over mDNS, found across namespaces by mesh/mdns and by avahi, and finds what avahi announces', { skip: SKIP }, async (t) => {
    const net: MeshNet = await createMeshNet('mdns');
    t.after(() => net.destroy());

    await t.test('a browser in the peer namespace finds the three services with the brain id, reaches /health, and hears the goodbye at shutdown', async () => {
      const browser = await startBrowser(net.peerNs, SCRIPT, ['api', 'node', 'sync']);
      try {
        const brain = await startBrainIn(net.brainNs, { args: ['--host', '0.0.0.0'] });
        try {
          const api = await browser.waitFor(isUp('api'), 'the _svc._tcp service');
          const id = brain.brainId();
          assert.equal(api.service?.brainId, id);
          assert.equal(api.service?.port, brain.port);
          assert.equal(api.service?.baseUrl, `http://${net.brainV4}:${brain.port}`);
          assert.deepEqual(api.service?.addresses.filter((a) => !a.includes(':')), [net.brainV4]);
          assert.match(api.service?.host ?? '', /^[a-z0-9-]+\.local$/);
          assert.equal(api.service?.txt.api_path, '/api');
          assert.equal(api.service?.txt.tls, '0');
          assert.equal(api.health, 200, 'GET /health at the resolved address, from the peer namespace');
          const name = api.service.name;
          assert.equal(name, `svc-${api.service.host.replace(/\.local$/, '')}-${id.slice(0, 8)}`);
          const node = await browser.waitFor(isUp('node', name), 'the _feral-brain._tcp service');
          assert.deepEqual(node.service?.txt, { version: '1', node_path: '/v1/node', tls: '0' });
          const sync = await browser.waitFor(isUp('sync', name), 'the _svc-sync._tcp service');
          assert.equal(sync.service?.brainId, id);
          t.diagnostic(`discovered ${api.at - brain.spawnedAt} ms after the brain was spawned`);
          await brain.lines.waitFor((l) => l.includes(`"msg":"mDNS: advertising ${api.service!.host}:${brain.port}"`), 'the log line of the announcement', brain.exited);
        } finally {
          assert.equal(await brain.stop(), 0);
        }
        for (const kind of ['api', 'node', 'sync']) await browser.waitFor((e) => e.event === 'down' && e.kind === kind, `the goodbye of ${kind}`);
      } finally {
        await browser.stop();
      }
    });

    await t.test('avahi in the peer namespace lists the brain (avahi-browse -rpt) and resolves its .local name; SVC_SYNC_DISABLED=1 drops only the sync service', async () => {
      const avahi = await startAvahi(net.peerNs, net.peerIf, `svc-peer-${process.pid}`);
      try {
        const brain = await startBrainIn(net.brainNs, { args: ['--host', '0.0.0.0'], env: { SVC_SYNC_DISABLED: '1' } });
        try {
          const advertised = await brain.lines.waitFor((l) => l.includes('"msg":"mDNS: advertising '), 'the announcement', brain.exited);
          const host = /advertising ([^:]+):/.exec(advertised)![1]!;
          const id = brain.brainId();
          // avahi-browse -t lists what its cache holds after its first round of queries: bounded retries.
          let svc: string[] | undefined;
          for (let i = 0; i < 5 && svc === undefined; i++) svc = resolved(await avahi.run('avahi-browse', ['-rpt', '_svc._tcp'])).find((f) => f[9]?.includes(id));
          assert.ok(svc, 'avahi-browse -rpt _svc._tcp lists the brain');
          assert.deepEqual(svc.slice(6, 9), [host, net.brainV4, String(brain.port)]);
          assert.match(svc[3]!, new RegExp(`^svc-.*-${id.slice(0, 8)}$`));
          for (const kv of [`"brain_id=${id}"`, '"api_path=/api"', '"tls=0"', '"version=0.1.0"']) assert.ok(svc[9]!.includes(kv), `${kv} in ${svc[9]}`);
          const node = resolved(await avahi.run('avahi-browse', ['-rpt', '_feral-brain._tcp'])).find((f) => f[3] === svc[3]);
          assert.ok(node, 'avahi-browse -rpt _feral-brain._tcp lists the brain');
          for (const kv of ['"version=1"', '"node_path=/v1/node"', '"tls=0"']) assert.ok(node[9]!.includes(kv), kv);
          assert.equal((await avahi.run('avahi-resolve', ['-4', '-n', host])).trim(), `${host}\t${net.brainV4}`);
          // The brain's announcement carried all its services at once, and avahi has cached it: the
          // sync service would be listed now if it had been announced.
          assert.equal(resolved(await avahi.run('avahi-browse', ['-rpt', '_svc-sync._tcp'])).find((f) => f[3] === svc[3]), undefined);
        } finally {
          await brain.stop();
        }
      } finally {
        await avahi.stop();
      }
    });

    await t.test('mesh/mdns browsing from the brain namespace, beside the running brain, resolves a service avahi-publish announces', async () => {
      const avahi = await startAvahi(net.peerNs, net.peerIf, `svc-peer-${process.pid}`);
      try {
        const brain = await startBrainIn(net.brainNs, { args: ['--host', '0.0.0.0'] });
        try {
          await brain.lines.waitFor((l) => l.includes('"msg":"mDNS: advertising '), 'the announcement', brain.exited);
          const peerId = '9f8e7d6c-0000-4aaa-8bbb-0123456789ab';
          const publish = avahi.start('avahi-publish', ['-s', `peer-brain-${process.pid}`, '_svc-sync._tcp', '7777', 'version=1', `brain_id=${peerId}`, 'sync_path=/sync', 'tls=0']);
          await publish.lines.waitFor((l) => l.startsWith('Established under name'), 'avahi-publish established', publish.exited);
          const browser = await startBrowser(net.brainNs, SCRIPT, ['sync']);
          try {
            const peer = await browser.waitFor((e) => e.event === 'up' && e.service?.brainId === peerId, 'the avahi-published peer');
            assert.equal(peer.service?.name, `peer-brain-${process.pid}`);
            assert.equal(peer.service?.host, `${avahi.hostName}.local`);
            assert.equal(peer.service?.port, 7777);
            // The address record may come in a later answer than SRV and TXT: until it does, the URL names the .local host.
            assert.ok([`http://${net.peerV4}:7777`, `http://${avahi.hostName}.local:7777`].includes(peer.service?.baseUrl ?? ''), peer.service?.baseUrl);
            assert.equal(peer.service?.path, '/sync');
            await browser.waitFor((e) => e.event === 'up' && e.service?.brainId === brain.brainId(), 'the brain itself, on the same host');
          } finally {
            await browser.stop();
          }
          await publish.stop();
          assert.equal(brain.child.exitCode, null, 'the brain kept running beside avahi on UDP 5353');
        } finally {
          await brain.stop();
        }
      } finally {
        await avahi.stop();
      }
    });

    await t.test('localhost mode announces nothing and opens no mDNS socket; svc access lan announces, svc access localhost says goodbye', async () => {
      const browser = await startBrowser(net.peerNs, SCRIPT, ['api']);
      try {
        const brain = await startBrainIn(net.brainNs);
        try {
          const sockets = async (): Promise<string> => (await runToolOk('ip', ['netns', 'exec', net.brainNs, 'ss', '-uanpH', 'sport = :5353'])).stdout;
          assert.equal(await sockets(), '', 'no UDP 5353 socket in the brain namespace');
          const access = async (mode: string): Promise<number> => {
            const r = await runToolOk('ip', ['netns', 'exec', net.brainNs, 'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', '-X', 'POST', '-H', `authorization: Bearer ${brain.token()}`, `http://127.0.0.1:${brain.port}/api/access/${mode}`]);
            return Number(r.stdout);
          };
          assert.equal(await access('lan'), 200);
          const up = await browser.waitFor((e) => e.event === 'up' && e.service?.brainId === brain.brainId(), 'the announcement after svc access lan');
          assert.equal(up.health, 200);
          assert.match(await sockets(), /node/, 'the brain holds UDP 5353 now');
          assert.equal(await access('localhost'), 200);
          await browser.waitFor((e) => e.event === 'down' && e.name === instanceOf(brain.brainId(), browser.events()), 'the goodbye after svc access localhost');
        } finally {
          await brain.stop();
        }
      } finally {
        await browser.stop();
      }
    });
  });

  void test('bonjour-service is in a chunk of its own that the brain does not import at start (localhost mode never loads it)', () => {
    const dist = join(ROOT, 'dist');
    const chunks = readdirSync(dist).filter((f) => f.endsWith('.mjs'));
    const holder = chunks.filter((f) => readFileSync(join(dist, f), 'utf8').includes('Service name is already in use on the network'));
    assert.equal(holder.length, 1, `one chunk holds bonjour-service: ${holder.join(', ')}`);
    // The static import graph from the entry: `import ... from "./chunk-x.mjs"` (dynamic imports are import("./...")).
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const m of readFileSync(join(dist, file), 'utf8').matchAll(/^import\s(?:[^;]*?from\s*)?"\.\/([^"]+)";?$/gm)) visit(m[1]!);
    };
    visit('svc.mjs');
    assert.ok(!seen.has(holder[0]!), `svc.mjs imports ${holder[0]} statically: ${[...seen].join(', ')}`);
  });
}
