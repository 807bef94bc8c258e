// svc doctor: local diagnostics that work whether or not the brain runs; with a brain on the port, the
// API token is tried on an authenticated route. Every failing check says how to fix it. Exit 0 when
// all pass, 1 otherwise.
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadSettings } from '../../daemon/config/load-settings';
import { applyEnvironment } from '../../daemon/config/environment';
import { loadVaultKeyReadOnly } from '../../daemon/vault/vault-key';
import { Vault } from '../../daemon/vault/vault';
import type { Settings } from '../../daemon/config/settings-schema';
import { VAULT_NAMESPACE } from '../../daemon/providers/key-ring';
import { health } from './brain';
import type { DashboardStatus } from '../../protocol/dashboard';
import { callBrain, type Connection, type Env } from '../connection';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const MIN_NODE = [20, 19, 0] as const;

export function nodeVersionOk(version: string): boolean {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const have = parts[i] ?? 0;
    const need = MIN_NODE[i] ?? 0;
    if (have !== need) return have > need;
  }
  return true;
}

function privateFile(file: string, label: string): Check | null {
  if (!existsSync(file)) return null;
  const mode = statSync(file).mode & 0o777;
  return mode & 0o077
    ? { name: label, ok: false, detail: `${file} is readable by others (mode ${mode.toString(8)})`, fix: `chmod 600 ${file}` }
    : { name: label, ok: true, detail: `${file} is private (600)` };
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port }, () => server.close(() => resolve(true)));
  });
}

export async function runChecks(conn: Connection, env: Env): Promise<Check[]> {
  const checks: Check[] = [];
  checks.push(
    nodeVersionOk(process.version)
      ? { name: 'node', ok: true, detail: `Node.js ${process.version}` }
      : { name: 'node', ok: false, detail: `Node.js ${process.version} is too old`, fix: `install Node.js ${MIN_NODE.join('.')} or newer (Node 20, 22 and 24 are supported)` },
  );
  const home = conn.home;
  if (!existsSync(home)) {
    checks.push({ name: 'home', ok: false, detail: `${home} does not exist`, fix: 'run `svc start` once; it creates it' });
  } else {
    const mode = statSync(home).mode & 0o777;
    checks.push(mode & 0o077 ? { name: 'home', ok: false, detail: `${home} is accessible by others (mode ${mode.toString(8)})`, fix: `chmod 700 ${home}` } : { name: 'home', ok: true, detail: `${home} (700)` });
  }
  let settingsPort = 9090;
  let settingsHost = '127.0.0.1';
  let settings: Settings | undefined;
  try {
    // The environment the brain would start with, too: a variable it refuses stops it like a bad file.
    const s = applyEnvironment(loadSettings(join(home, 'settings.json')), env);
    settings = s;
    settingsPort = Number(env.SVC_PORT ?? s.server.port);
    settingsHost = env.SVC_HOST ?? s.server.host;
    checks.push({ name: 'settings', ok: true, detail: existsSync(join(home, 'settings.json')) ? 'settings.json is valid' : 'no settings.json (defaults apply)' });
  } catch (err) {
    checks.push({ name: 'settings', ok: false, detail: (err as Error).message, fix: `correct the listed fields in ${join(home, 'settings.json')} or the environment (docs/configuration.md)` });
  }
  const token = privateFile(join(home, 'api-token'), 'api token file');
  if (token) checks.push(token);
  const vault = vaultChecks(home, env);
  checks.push(...vault.checks);
  if (settings) checks.push(...providerChecks(settings.providers.chain, vault.keys));
  const h = await health(conn, 2000);
  if (h) {
    checks.push({ name: 'brain', ok: true, detail: `answering at ${conn.url} (svc ${h.version})` });
    checks.push(await tokenCheck(conn));
  } else {
    checks.push({ name: 'brain', ok: false, detail: `not answering at ${conn.url}`, fix: 'svc start   (or: systemctl start svc-brain; journalctl -u svc-brain for its log)' });
    const free = await portFree(settingsHost, settingsPort);
    checks.push(
      free
        ? { name: 'port', ok: true, detail: `${settingsHost}:${settingsPort} is free for the brain` }
        : { name: 'port', ok: false, detail: `${settingsHost}:${settingsPort} is taken by another program`, fix: `stop that program, or choose another port: svc start --port 9091 (or SVC_PORT, or server.port in settings.json)` },
    );
  }
  return checks;
}

/** /health answers anyone; the token is only proved by a call that needs it (spec: /api needs the bearer token). */
export async function tokenCheck(conn: Connection): Promise<Check> {
  const name = 'api token';
  const file = join(conn.home, 'api-token');
  const r = await callBrain<DashboardStatus>(conn, 'GET', '/api/dashboard/status', undefined, 2000);
  if (r.status === 200) return { name, ok: true, detail: `accepted by the brain at ${conn.url}` };
  if (r.status !== 401) return { name, ok: false, detail: `GET /api/dashboard/status answered HTTP ${r.status}`, fix: 'see the brain log (svc serve output, $SVC_HOME/brain.log, or journalctl -u svc-brain)' };
  return conn.token
    ? { name, ok: false, detail: `the brain at ${conn.url} refuses the token from ${file} (or SVC_API_TOKEN): it belongs to another brain`, fix: `use the home of the brain on that port (--home or SVC_HOME), or set SVC_API_TOKEN to its token` }
    : { name, ok: false, detail: `no token: ${file} does not exist and SVC_API_TOKEN is not set`, fix: `use the home of the brain on that port (--home or SVC_HOME), or set SVC_API_TOKEN to its token` };
}

/**
 * Every provider in the failover chain can be called: the embedded local one always, a keyless server
 * (Ollama, llama.cpp) without a key, the others only with a key in the vault. `keys` is the vault's
 * `providers` key names, or null when the vault could not be read (the vault check says why).
 */
export function providerChecks(chain: Settings['providers']['chain'], keys: readonly string[] | null): Check[] {
  return chain.map((e): Check => {
    const name = `provider ${e.id}`;
    if (e.kind === 'local') return { name, ok: true, detail: 'the embedded local provider (no key, no network)' };
    if (e.keyless) return { name, ok: true, detail: `${e.kind} at ${e.base_url ?? 'its default URL'}, no key needed` };
    if (keys === null) return { name, ok: false, detail: `${e.kind}: its keys cannot be read while the vault is unreadable`, fix: 'fix the vault check above' };
    const count = keys.filter((k) => k.startsWith(`${e.id}:`)).length;
    return count > 0
      ? { name, ok: true, detail: `${e.kind}, ${count} key${count === 1 ? '' : 's'} in the vault` }
      : { name, ok: false, detail: `${e.kind}, but no API key in the vault: every turn falls through to the next provider`, fix: `svc key add ${e.id} default   (or remove it from providers.chain in settings.json)` };
  });
}

function vaultChecks(home: string, env: Env): { checks: Check[]; keys: string[] | null } {
  let key;
  try {
    key = loadVaultKeyReadOnly({ home, envKey: env.SVC_VAULT_KEY, credentialsDir: env.CREDENTIALS_DIRECTORY });
  } catch (err) {
    return { checks: [{ name: 'vault key', ok: false, detail: (err as Error).message, fix: 'set SVC_VAULT_KEY to 64 hex characters, or restore $SVC_HOME/vault.key' }], keys: null };
  }
  if (!key) {
    return existsSync(join(home, 'vault.json'))
      ? { checks: [{ name: 'vault key', ok: false, detail: 'vault.json exists but no key was found', fix: 'restore vault.key into $SVC_HOME, or set SVC_VAULT_KEY' }], keys: null }
      : { checks: [{ name: 'vault key', ok: true, detail: 'none yet; the brain creates $SVC_HOME/vault.key on first start' }], keys: [] };
  }
  const out: Check[] = [];
  const file = privateFile(join(home, 'vault.key'), 'vault key file');
  if (key.source === 'file' && file) out.push(file);
  const vault = new Vault({ file: join(home, 'vault.json'), key: key.key, onDecryptError: () => undefined });
  const st = vault.open();
  out.push(
    st.state === 'ok'
      ? { name: 'vault', ok: true, detail: `decrypts with the ${key.source} key (${st.namespaces} namespaces)` }
      : { name: 'vault', ok: false, detail: st.reason, fix: 'provide the key that encrypted vault.json (SVC_VAULT_KEY or $SVC_HOME/vault.key); the brain never overwrites a vault it cannot decrypt' },
  );
  return { checks: out, keys: st.state === 'ok' ? vault.keys(VAULT_NAMESPACE) : null };
}

export async function doctor(conn: Connection, env: Env, json: boolean, out: NodeJS.WritableStream): Promise<number> {
  const checks = await runChecks(conn, env);
  if (json) out.write(`${JSON.stringify({ ok: checks.every((c) => c.ok), checks })}\n`);
  else {
    for (const c of checks) {
      out.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
      if (!c.ok && c.fix) out.write(`     fix: ${c.fix}\n`);
    }
  }
  return checks.every((c) => c.ok) ? 0 : 1;
}
