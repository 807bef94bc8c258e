// The admin of external servers with fakes for the store and the connections: a name is one server
// across settings.json and the API (409), a declaration needs exactly one transport (400), settings'
// servers are removed in settings.json (409), an unknown one is 404, a secret needs an open vault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServersAdmin, declarationProblems } from '../../../daemon/mcp/servers-admin';
import { AppError } from '../../../daemon/kernel/errors';
import type { McpServerDeclaration, McpServerStatus } from '../../../protocol/mcp';
import type { DeclaredServer } from '../../../daemon/mcp/mcp-clients';

function rig(vaultState = 'ok') {
  const stored: McpServerDeclaration[] = [];
  const applied: DeclaredServer[][] = [];
  const secrets: string[] = [];
  let retried = 0;
  const status = (name: string): McpServerStatus => ({ name, source: 'cli', transport: 'stdio', target: 'x', safety: 'privileged', state: 'connecting', last_error: null, tools: [], connected_at: null, reconnects: 0 });
  const admin = new ServersAdmin({
    staticServers: [{ name: 'fixed', command: 'srv' }],
    store: {
      list: () => [...stored],
      add: async (d) => (stored.some((s) => s.name === d.name) ? false : (stored.push(d), true)),
      remove: async (name) => {
        const i = stored.findIndex((s) => s.name === name);
        return i >= 0 && stored.splice(i, 1).length === 1;
      },
    },
    clients: {
      apply: async (servers) => void applied.push([...servers]),
      list: () => [],
      get: (name) => status(name),
      declaration: () => undefined,
      test: async (d) => ({ name: d.name, ok: true, tools: [], error: null }),
      retryFailed: () => void retried++,
    },
    vault: { set: (ns, key, value) => void secrets.push(`${ns}/${key}=${value}`), status: () => ({ state: vaultState }) },
  });
  return { admin, stored, applied, secrets, retried: () => retried };
}

const code = (c: string) => (err: unknown) => err instanceof AppError && err.code === c;

void test('add applies the new set at once; conflicts and bad transports are refused', async () => {
  const { admin, applied } = rig();
  await admin.add({ name: 'extra', command: 'srv2' });
  assert.deepEqual(applied.at(-1)!.map((s) => `${s.source}:${s.declaration.name}`), ['settings:fixed', 'cli:extra']);
  await assert.rejects(admin.add({ name: 'fixed', command: 'x' }), code('CONFLICT'));
  await assert.rejects(admin.add({ name: 'extra', url: 'http://x/mcp' }), code('CONFLICT'));
  await assert.rejects(admin.add({ name: 'both', command: 'x', url: 'http://x/mcp' }), code('BAD_REQUEST'));
  await assert.rejects(admin.add({ name: 'neither' }), code('BAD_REQUEST'));
});

void test('remove: a settings server is 409, an unknown one 404, an added one goes', async () => {
  const { admin, applied } = rig();
  await admin.add({ name: 'extra', command: 'srv2' });
  await assert.rejects(admin.remove('fixed'), code('CONFLICT'));
  await assert.rejects(admin.remove('ghost'), code('NOT_FOUND'));
  await admin.remove('extra');
  assert.deepEqual(applied.at(-1)!.map((s) => s.declaration.name), ['fixed']);
  await assert.rejects(admin.test('ghost'), code('NOT_FOUND'));
  assert.equal((await admin.test('fixed')).ok, true);
});

void test('a secret goes to mcp/<key> and failed servers retry; a locked vault is 503', () => {
  const ok = rig();
  assert.deepEqual(ok.admin.setSecret('token', 'v'), { ref: { vault: 'mcp/token' } });
  assert.deepEqual(ok.secrets, ['mcp/token=v']);
  assert.equal(ok.retried(), 1);
  assert.throws(() => rig('locked').admin.setSecret('token', 'v'), code('UNAVAILABLE'));
});

void test('declarationProblems: duplicate names and transport problems of settings.json, by index', () => {
  assert.deepEqual(declarationProblems([{ name: 'a', command: 'x' }, { name: 'a', url: 'http://x/mcp' }, { name: 'b', url: 'http://x', env: { A: 'b' } }]), [
    'mcp.servers[1]: the name a is used twice',
    'mcp.servers[2] (b): args, cwd and env belong to a stdio server (command), not to url',
  ]);
});
