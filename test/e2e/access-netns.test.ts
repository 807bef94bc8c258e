// svc access end to end, off loopback for real (issue 13, docs/access.md): the built brain runs inside a
// network namespace this test creates, linked to this process by a veth pair on a private test subnet
// (10.232.N.0/30, fd32:232:N::/64) — never the machine's own LAN. It starts in localhost mode, so the
// other end of the veth is refused; `svc access lan` (run inside the namespace, as a person on the
// brain's machine would) lets it in without a restart, with /metrics still 404 and the API still 401
// without a token; a restart keeps lan; `svc access localhost` refuses it again and closes its open
// WebSocket (1001). Needs root for `ip netns`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { AccessStatus } from '../../protocol/access';
import { SVC } from '../helpers/brain-process';
import { isRoot, runTool, runToolOk } from '../helpers/external-tools';
import { createVethNamespace, deleteNamespace, startBrainInNamespace, vethPlan } from '../helpers/netns';

const NET = vethPlan('access', 232);
const { ns: NS } = NET;
const [BRAIN_V4, BRAIN_V6] = [NET.nsV4, NET.nsV6];

/** `svc access <action>` run inside the namespace against the brain's loopback address. */
function svcAccess(home: string, port: number, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runTool('ip', ['netns', 'exec', NS, process.execPath, SVC, '--url', `http://127.0.0.1:${port}`, 'access', ...args], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: '' } });
}

/** What the other end of the veth gets: the status code, or the connection error's code. */
async function fromOutside(url: string, headers: Record<string, string> = {}): Promise<number | string> {
  try {
    const r = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    await r.arrayBuffer();
    return r.status;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return cause?.code ?? String(err);
  }
}

const outside = (port: number): string[] => [`http://${BRAIN_V4}:${port}`, `http://[${BRAIN_V6}]:${port}`];

void test('svc access lan and localhost move the brain on and off the network without a restart; lan survives a restart', { skip: isRoot() ? false : 'needs root to create a network namespace (ip netns add); CI runs as root' }, async (t) => {
  t.after(() => deleteNamespace(NET));
  await createVethNamespace(NET);
  const home = mkdtempSync(join(tmpdir(), 'svc-access-netns-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));

  let brain = await startBrainInNamespace(NS, { home });
  t.after(() => brain.stop());
  const token = readFileSync(join(home, 'api-token'), 'utf8').trim();
  const auth = { authorization: `Bearer ${token}` };

  // Localhost (the default): loopback answers inside the namespace, the other end of the veth is refused.
  const inside = await runToolOk('ip', ['netns', 'exec', NS, 'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5', `http://127.0.0.1:${brain.port}/health`]);
  assert.equal(inside.stdout, '200');
  for (const base of outside(brain.port)) assert.equal(await fromOutside(`${base}/health`), 'ECONNREFUSED', base);

  // svc access lan: no restart, the same port, reachable over IPv4 and IPv6; the security rules hold off loopback.
  const lan = await svcAccess(home, brain.port, 'lan');
  assert.equal(lan.code, 0, lan.stderr);
  assert.match(lan.stdout, new RegExp(`^mode: lan \\(listening on 0\\.0\\.0\\.0:${brain.port}, \\[::\\]:${brain.port}\\)\\nreachable at:\\n  http://${BRAIN_V4.replace(/\./g, '\\.')}:${brain.port}\\n  http://\\[${BRAIN_V6}\\]:${brain.port}\\n`));
  for (const base of outside(brain.port)) {
    assert.equal(await fromOutside(`${base}/health`), 200, base);
    assert.equal(await fromOutside(`${base}/metrics`), 404, `${base}: /metrics stays loopback-only (SVC_METRICS_PUBLIC unset)`);
    assert.equal(await fromOutside(`${base}/api/access/status`), 401, `${base}: the API still needs the token`);
  }
  const status = (await (await fetch(`http://${BRAIN_V4}:${brain.port}/api/access/status`, { headers: auth })).json()) as AccessStatus;
  assert.deepEqual([status.mode, status.urls], ['lan', outside(brain.port)]);
  assert.deepEqual(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')), { access: { mode: 'lan', remote: false } });

  // A restart keeps lan (a new port: the test asks for an ephemeral one).
  await brain.stop();
  brain = await startBrainInNamespace(NS, { home });
  for (const base of outside(brain.port)) assert.equal(await fromOutside(`${base}/health`), 200, `${base} after a restart`);

  // An open WebSocket from the LAN side is told the brain went away when the mode goes back to localhost.
  const ws = new WebSocket(`ws://${BRAIN_V4}:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${token}`]);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const local = await svcAccess(home, brain.port, 'localhost');
  assert.equal(local.code, 0, local.stderr);
  assert.match(local.stdout, /^mode: localhost \(listening on 127\.0\.0\.1:\d+, \[::1\]:\d+\)\nreachable from this machine only/);
  assert.equal(await closed, 1001);
  for (const base of outside(brain.port)) assert.equal(await fromOutside(`${base}/health`), 'ECONNREFUSED', `${base} after svc access localhost`);
  const again = await runToolOk('ip', ['netns', 'exec', NS, 'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5', `http://127.0.0.1:${brain.port}/health`]);
  assert.equal(again.stdout, '200', 'loopback still answers');
});
