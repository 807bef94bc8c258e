// svc access on the built brain and CLI, on loopback: remote-up/remote-down (docs/access.md "Remote"): with no
// Tailscale on the brain's PATH the refusal names the fix; with a stand-in `tailscale` that prints what
// the real CLI prints (test/helpers/fake-tailscale.ts) the brain asks it to serve its loopback port,
// lists the tunnel URL first, persists remote, brings the tunnel up again after a restart, and
// remote-down returns to the mode before; /metrics refuses proxied requests; localhost mode binds ::1
// as well as 127.0.0.1. Nothing here needs root (lan is in access-netns.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { WebSocket } from 'ws';
import type { AccessStatus } from '../../protocol/access';
import { startBrain, SVC, tempHome, type BrainProcess } from '../helpers/brain-process';
import { runTool } from '../helpers/external-tools';
import { fakeTailscale } from '../helpers/fake-tailscale';

/** PATH without any folder that holds a `tailscale`, so "absent" is true whatever this machine has. */
function pathWithoutTailscale(): string {
  const holds = (dir: string): boolean => {
    try {
      accessSync(join(dir, 'tailscale'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  return (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !holds(dir)).join(delimiter);
}

/** Resolves when the brain has logged a line with this message (it may have already). */
function logged(brain: BrainProcess, msg: string): Promise<void> {
  const has = (line: string): boolean => line.includes(`"msg":"${msg}"`);
  if (brain.lines.some(has)) return Promise.resolve();
  return new Promise((resolve) => {
    const lines = createInterface({ input: brain.child.stdout! });
    // Not closed: closing a readline interface pauses the stream the helper also reads.
    lines.on('line', (line) => {
      if (has(line)) resolve();
    });
  });
}

const svc = (url: string, home: string, env: Record<string, string>, ...args: string[]) => runTool(process.execPath, [SVC, '--url', url, 'access', ...args], { env: { ...process.env, ...env, SVC_HOME: home, SVC_API_TOKEN: '' } });

void test('remote-up without Tailscale: exit 1, the reason and how to install it; the mode is unchanged', async (t) => {
  const PATH = pathWithoutTailscale();
  const brain = await startBrain({ env: { PATH } });
  t.after(() => brain.stop());
  const r = await svc(brain.url, brain.home, { PATH }, 'remote-up');
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "svc: the Tailscale CLI (tailscale) is not installed or not on the brain's PATH\nfix: install Tailscale (curl -fsSL https://tailscale.com/install.sh | sh), sign in with `sudo tailscale up`, then run `svc access remote-up` again\n");
  const api = await brain.api('/api/access/remote-up', { method: 'POST' });
  assert.equal(api.status, 409);
  const body = (await api.json()) as { error: { code: string; details: { reason: string } } };
  assert.deepEqual([body.error.code, body.error.details.reason], ['CONFLICT', 'cli_missing']);
  const status = (await (await brain.api('/api/access/status')).json()) as AccessStatus;
  assert.deepEqual([status.mode, status.tunnel.state], ['localhost', 'off']);
});

void test('remote-up with Tailscale serves the loopback port on the tailnet, survives a restart, remote-down goes back', async (t) => {
  const fake = fakeTailscale(t, 'running');
  const env = { PATH: `${fake.dir}${delimiter}${process.env.PATH ?? ''}` };
  const home = tempHome();
  let brain = await startBrain({ home, env, keepHome: true });
  t.after(() => brain.stop());

  const up = await svc(brain.url, home, env, 'remote-up');
  assert.equal(up.code, 0, up.stderr);
  assert.match(up.stdout, /^mode: remote over localhost .*\nreachable at:\n {2}https:\/\/brain\.tail1234\.ts\.net\n.*tunnel: tailscale up https:\/\/brain\.tail1234\.ts\.net\n$/s);
  assert.deepEqual(fake.calls(), [
    ['status', '--json'],
    ['serve', '--bg', '--yes', `http://127.0.0.1:${brain.port}`],
  ]);
  assert.deepEqual(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')), { access: { mode: 'localhost', remote: true } });

  // Restarted (a new ephemeral port): remote is kept and the tunnel is pointed at the new port.
  await brain.stop();
  brain = await startBrain({ home, env });
  await logged(brain, 'remote access: tunnel up');
  const status = (await (await brain.api('/api/access/status')).json()) as AccessStatus;
  assert.deepEqual([status.mode, status.tunnel.state, status.urls[0]], ['remote', 'up', 'https://brain.tail1234.ts.net']);
  assert.equal(fake.serving(), `http://127.0.0.1:${brain.port}`);

  // A tailnet caller's WebSocket arrives through Tailscale's proxy: from loopback, with X-Forwarded-For.
  const open = async (headers: Record<string, string>): Promise<{ ws: WebSocket; closed: Promise<number> }> => {
    const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${brain.token}`], { headers });
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { ws, closed };
  };
  const tailnet = await open({ 'x-forwarded-for': '100.101.102.103', 'x-forwarded-host': 'brain.tail1234.ts.net' });
  const local = await open({});

  const down = await svc(brain.url, home, env, 'remote-down');
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stdout, /^mode: localhost \(/);
  assert.equal(await tailnet.closed, 1001, "the tunnel's connection is closed when remote access ends");
  assert.equal(local.ws.readyState, WebSocket.OPEN, 'a local one stays');
  local.ws.close();
  assert.deepEqual(fake.calls().at(-1), ['serve', '--https=443', 'off']);
  assert.equal(fake.serving(), null);
  assert.deepEqual(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')), { access: { mode: 'localhost', remote: false } });
});

void test('/metrics through the tunnel is off loopback: a proxied request (X-Forwarded-For, as Tailscale Serve sends) gets the 404', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const metrics = (headers: Record<string, string>) => fetch(`${brain.url}/metrics`, { headers }).then(async (r) => (await r.arrayBuffer(), r.status));
  assert.equal(await metrics({}), 200, 'a loopback caller is served');
  assert.equal(await metrics({ 'x-forwarded-for': '100.101.102.103', 'x-forwarded-host': 'brain.tail1234.ts.net', 'x-forwarded-proto': 'https' }), 404);
  assert.equal(await metrics({ forwarded: 'for=100.101.102.103;proto=https' }), 404);
  const unmounted = await fetch(`${brain.url}/metricz`, { headers: { 'x-forwarded-for': '100.101.102.103' } });
  assert.equal(unmounted.status, 404);
});

void test('localhost mode binds ::1 too: a port taken there stops the start with the address that failed', async (t) => {
  const { createServer } = await import('node:net');
  const squatter = createServer();
  await new Promise<void>((resolve, reject) => {
    squatter.once('error', reject);
    squatter.listen({ host: '::1', port: 0, exclusive: true }, resolve);
  });
  t.after(() => squatter.close());
  const port = (squatter.address() as { port: number }).port;
  const home = tempHome();
  const r = await runTool(process.execPath, [SVC, 'serve', '--port', String(port)], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: '', SVC_LOG_LEVEL: 'silent' } });
  rmSync(home, { recursive: true, force: true });
  assert.equal(r.code, 1);
  // The last line (node may print a deprecation warning of a dependency before it).
  assert.equal(r.stderr.trimEnd().split('\n').at(-1), `svc: cannot listen on [::1]:${port}: EADDRINUSE (set --port, SVC_PORT or server.port)`);
});
