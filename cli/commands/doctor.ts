// svc doctor: local diagnostics that work whether or not the brain runs. Every failing check says
// how to fix it. Exit 0 when all pass, 1 otherwise.
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadSettings } from '../../daemon/config/load-settings';
import { loadVaultKeyReadOnly } from '../../daemon/vault/vault-key';
import { Vault } from '../../daemon/vault/vault';
import { health } from './brain';
import type { Connection, Env } from '../connection';

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
  try {
    const s = loadSettings(join(home, 'settings.json'));
    settingsPort = Number(env.SVC_PORT ?? s.server.port);
    settingsHost = env.SVC_HOST ?? s.server.host;
    checks.push({ name: 'settings', ok: true, detail: existsSync(join(home, 'settings.json')) ? 'settings.json is valid' : 'no settings.json (defaults apply)' });
  } catch (err) {
    checks.push({ name: 'settings', ok: false, detail: (err as Error).message, fix: `correct the listed fields in ${join(home, 'settings.json')} (docs/configuration.md)` });
  }
  const token = privateFile(join(home, 'api-token'), 'api token');
  if (token) checks.push(token);
  checks.push(...vaultChecks(home, env));
  const h = await health(conn, 2000);
  if (h) {
    checks.push({ name: 'brain', ok: true, detail: `answering at ${conn.url} (svc ${h.version})` });
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

function vaultChecks(home: string, env: Env): Check[] {
  let key;
  try {
    key = loadVaultKeyReadOnly({ home, envKey: env.SVC_VAULT_KEY, credentialsDir: env.CREDENTIALS_DIRECTORY });
  } catch (err) {
    return [{ name: 'vault key', ok: false, detail: (err as Error).message, fix: 'set SVC_VAULT_KEY to 64 hex characters, or restore $SVC_HOME/vault.key' }];
  }
  if (!key) {
    return existsSync(join(home, 'vault.json'))
      ? [{ name: 'vault key', ok: false, detail: 'vault.json exists but no key was found', fix: 'restore vault.key into $SVC_HOME, or set SVC_VAULT_KEY' }]
      : [{ name: 'vault key', ok: true, detail: 'none yet; the brain creates $SVC_HOME/vault.key on first start' }];
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
  return out;
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
