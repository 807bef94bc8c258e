// External MCP servers as the brain's tools (issue 16), on the built brain: the real
// @modelcontextprotocol/server-everything and server-filesystem as stdio servers of settings.json,
// their tools registered as mcp_<server>_<tool>; a scripted model turn reads a file of a temp folder
// through the filesystem server; the fixture server's tool list changes (list_changed followed), it
// crashes (reconnected, a new process), it hangs (the call fails within call_timeout_ms and the turn
// ends); a default-safety server's call is held for approval; a server added through the API (and
// `svc mcp servers`) gets its env secret from the vault; a Streamable HTTP server with a vault bearer
// header, reconnected after it restarts; remove takes the tools away; the brain's stop ends every stdio child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SVC, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { connect, waitForFrame } from '../helpers/session-client';
import { startOpenAiServer } from '../fakes/openai-server';
import { EVERYTHING, FILESYSTEM, FIXTURE, callingModel, httpFixture, serverWhen, servers } from '../helpers/mcp-rig';
import { until } from '../helpers/poll';
import type { ApprovalList } from '../../protocol/approvals';
import type { McpTestResult } from '../../protocol/mcp';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
};

const pidsOf = (file: string): number[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(Number);

interface Rig {
  brain: BrainProcess;
  home: string;
  work: string;
  pids: string;
  results: string[];
  /** One turn `CALL <tool> <args>`; resolves with the turn's answer text once it has ended. */
  turn(tool: string, args: Record<string, unknown>): Promise<string>;
}

async function mcpBrain(t: { after(fn: () => unknown): void }, mcp: Record<string, unknown>, withServers: (rig: { work: string; pids: string }) => unknown[]): Promise<Rig> {
  const fake = await startOpenAiServer();
  const home = tempHome('svc-mcp-e2e-');
  mkdirSync(join(home, 'work'));
  const work = realpathSync(join(home, 'work'));
  const pids = join(home, 'fixture.pids');
  writeFileSync(pids, '');
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] }, mcp: { ...mcp, servers: withServers({ work, pids }) } }));
  const { results } = callingModel(fake);
  const brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.kill();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });
  const { ws, frames } = await connect(brain);
  t.after(() => ws.close());
  let sessionId = '';
  return {
    brain,
    home,
    work,
    pids,
    results,
    turn: async (tool, args) => {
      const from = frames.length;
      const text = `CALL ${tool} ${JSON.stringify(args)}`;
      ws.send(JSON.stringify({ type: 'text_command', session_id: sessionId, payload: { text } }));
      const started = await waitForFrame(ws, frames, 'turn_started', (m) => m.payload.text === text, from);
      const response = await waitForFrame(ws, frames, 'text_response', (m) => m.payload.turn_id === started.payload.turn_id, from);
      sessionId = response.session_id;
      return response.payload.text;
    },
  };
}

const fixture = (name: string, pids: string, extra: Record<string, unknown> = {}) => ({ name, command: process.execPath, args: [FIXTURE], env: { FIXTURE_PID_FILE: pids }, safety: 'active', ...extra });

void test('server-everything and server-filesystem: their tools appear, a turn reads a file through the filesystem server, a default-safety call is held', { timeout: 120_000 }, async (t) => {
  const rig = await mcpBrain(t, {}, ({ work }) => [
    { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    { name: 'fs', command: process.execPath, args: [FILESYSTEM, work], safety: 'passive' },
  ]);
  const everything = await serverWhen(rig.brain, 'everything', (s) => s.state === 'connected');
  for (const name of ['mcp_everything_echo', 'mcp_everything_get_sum', 'mcp_everything_get_tiny_image']) assert.ok(everything.tools.includes(name), `${name} in ${everything.tools.join(',')}`);
  assert.equal(everything.safety, 'privileged', 'no safety declared: privileged');
  const fs = await serverWhen(rig.brain, 'fs', (s) => s.state === 'connected');
  assert.ok(fs.tools.includes('mcp_fs_read_text_file'), fs.tools.join(','));

  writeFileSync(join(rig.work, 'shopping.txt'), 'oat milk and 12 eggs\n');
  assert.equal(await rig.turn('mcp_fs_read_text_file', { path: join(rig.work, 'shopping.txt') }), 'done');
  assert.match(rig.results.at(-1)!, /"status":"ok".*oat milk and 12 eggs/);

  // The brain's own policy holds privileged tools: the call waits for approval, the turn still ends.
  assert.equal(await rig.turn('mcp_everything_echo', { message: 'hi' }), 'done');
  assert.match(rig.results.at(-1)!, /pending_approval/);
  const approvals = (await (await rig.brain.api('/api/approvals')).json()) as ApprovalList;
  assert.ok(approvals.approvals.some((a) => a.tool_name === 'mcp_everything_echo'), JSON.stringify(approvals));
});

void test('the fixture: list_changed followed, a crash reconnected with a new process, a hang fails within the timeout and the turn ends, stop ends every child', { timeout: 120_000 }, async (t) => {
  const rig = await mcpBrain(t, { call_timeout_ms: 1500 }, ({ pids }) => [fixture('fixture', pids)]);
  const first = await serverWhen(rig.brain, 'fixture', (s) => s.state === 'connected');
  assert.ok(first.tools.includes('mcp_fixture_add_tool'), `Add-Tool is mcp_fixture_add_tool: ${first.tools.join(',')}`);
  assert.ok(!first.tools.includes('mcp_fixture_extra'));

  await rig.turn('mcp_fixture_add_tool', { tool: 'extra' });
  await serverWhen(rig.brain, 'fixture', (s) => s.tools.includes('mcp_fixture_extra'));
  await rig.turn('mcp_fixture_remove_tool', { tool: 'extra' });
  await serverWhen(rig.brain, 'fixture', (s) => !s.tools.includes('mcp_fixture_extra'));

  assert.equal(await rig.turn('mcp_fixture_hang', {}), 'done', 'the turn ends');
  assert.match(rig.results.at(-1)!, /"status":"error".*did not answer hang within 1500 ms/);

  const [firstPid] = pidsOf(rig.pids);
  assert.equal(await rig.turn('mcp_fixture_crash', {}), 'done');
  assert.match(rig.results.at(-1)!, /"status":"error"/);
  const back = await serverWhen(rig.brain, 'fixture', (s) => s.state === 'connected' && s.reconnects >= 1);
  assert.ok(back.tools.includes('mcp_fixture_echo'));
  assert.equal(pidsOf(rig.pids).length, 2, 'a second process');
  assert.ok(!alive(firstPid!), 'the crashed one is gone');
  assert.equal(await rig.turn('mcp_fixture_echo', { text: 'again' }), 'done');
  assert.match(rig.results.at(-1)!, /echo: again/);

  assert.equal(await rig.brain.stop(), 0);
  for (const pid of pidsOf(rig.pids)) assert.ok(!alive(pid), `child ${pid} ended with the brain`);
});

void test('svc mcp servers: add with a vault env secret, an HTTP server with a vault bearer header, test, list --json, remove takes the tools away', { timeout: 120_000 }, async (t) => {
  const rig = await mcpBrain(t, {}, () => []);
  const env = { ...process.env, SVC_HOME: rig.brain.home, SVC_API_TOKEN: rig.brain.token };
  const svc = (args: string[], input?: string) => spawnSync(process.execPath, [SVC, '--url', rig.brain.url, ...args], { env, input: input ?? '', encoding: 'utf8', timeout: 60_000 });

  const secret = 'pa55-w0rd-for-the-fixture';
  const set = svc(['mcp', 'secret', 'fixturekey'], `${secret}\n`);
  assert.equal(set.status, 0, set.stderr);
  assert.match(set.stdout, /"vault": "mcp\/fixturekey"/);

  const added = svc(['mcp', 'servers', 'add', 'local', '--safety', 'active', '--env', JSON.stringify({ FIXTURE_SECRET: { vault: 'mcp/fixturekey' }, FIXTURE_PID_FILE: rig.pids }), '--', process.execPath, FIXTURE]);
  assert.equal(added.status, 0, added.stderr);
  await serverWhen(rig.brain, 'local', (s) => s.state === 'connected' && s.source === 'cli');
  assert.equal(await rig.turn('mcp_local_env_digest', { variable: 'FIXTURE_SECRET' }), 'done');
  assert.ok(rig.results.at(-1)!.includes(createHash('sha256').update(secret).digest('hex')), `the child got the vault value: ${rig.results.at(-1)}`);

  const token = 'fixture-http-token-7a1c';
  const remote = await httpFixture(token);
  t.after(() => remote.stop());
  const setHeader = svc(['mcp', 'secret', 'remotebearer'], `Bearer ${token}\n`);
  assert.equal(setHeader.status, 0, setHeader.stderr);
  assert.equal(svc(['mcp', 'servers', 'add', 'remote', '--http', remote.url, '--headers', JSON.stringify({ authorization: { vault: 'mcp/remotebearer' } }), '--safety', 'passive']).status, 0);
  const http = await serverWhen(rig.brain, 'remote', (s) => s.state === 'connected');
  assert.equal(http.transport, 'http');
  assert.ok(http.tools.includes('mcp_remote_echo'));
  assert.equal(await rig.turn('mcp_remote_echo', { text: 'over http' }), 'done');
  assert.match(rig.results.at(-1)!, /echo: over http/);

  // The HTTP server restarts (and forgets the session): the failed call loses the connection, a reconnect follows.
  await remote.stop();
  const again = await httpFixture(token, remote.port);
  t.after(() => again.stop());
  assert.equal(await rig.turn('mcp_remote_echo', { text: 'to a forgotten session' }), 'done');
  assert.match(rig.results.at(-1)!, /"status":"error"/);
  await serverWhen(rig.brain, 'remote', (s) => s.state === 'connected' && s.reconnects >= 1);
  assert.equal(await rig.turn('mcp_remote_echo', { text: 'back' }), 'done');
  assert.match(rig.results.at(-1)!, /echo: back/);

  const tested = svc(['mcp', 'servers', 'test', 'remote', '--json']);
  assert.equal(tested.status, 0, tested.stderr);
  const result = JSON.parse(tested.stdout) as McpTestResult;
  assert.equal(result.ok, true);
  assert.ok(result.tools.some((tool) => tool.name === 'mcp_remote_add_tool' && tool.remote_name === 'Add-Tool'));

  const listed = svc(['mcp', 'servers', '--json']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual((JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name).sort(), ['local', 'remote']);
  assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(token), 'no secret in the listing');
  assert.ok(!readFileSync(join(rig.home, 'settings.json'), 'utf8').includes(secret), 'nor in settings.json');

  const dup = svc(['mcp', 'servers', 'add', 'remote', '--http', remote.url]);
  assert.equal(dup.status, 1);
  assert.match(dup.stderr, /already declared/);

  for (const name of ['local', 'remote']) {
    const removed = svc(['mcp', 'servers', 'remove', name, '--json']);
    assert.equal(removed.status, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout), { removed: name });
  }
  assert.deepEqual(await servers(rig.brain), []);
  await until(
    () => 'the removed stdio child to end',
    async () => (pidsOf(rig.pids).every((pid) => !alive(pid)) ? true : undefined),
    10_000,
  );
  const gone = svc(['mcp', 'servers', 'remove', 'local']);
  assert.equal(gone.status, 1);
  assert.match(gone.stderr, /not found/);
});
