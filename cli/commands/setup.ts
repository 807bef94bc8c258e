// svc setup (spec 4.14): the first-run wizard — your name, the assistant's name and persona, and
// which model provider to use (with its key). Without a TTY it never prompts: it keeps the defaults
// (the embedded local agent, template identity files) and says how to personalise later.
// Identity goes through the API (PATCH /api/identity/*); the provider goes into settings.json's
// providers.chain (read at brain start, so a running local brain is restarted) and the key through
// POST /api/providers/<id>/keys, which probes it before saving.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import * as p from '@clack/prompts';
import type { Soul, TwinProfile } from '../../protocol/identity';
import type { AddKeyResponse } from '../../protocol/providers';
import { callBrain, callBrainOk, type Connection } from '../connection';

export const SETUP_MARKER = 'setup.json';

export type ProviderChoice = 'local' | 'openai' | 'anthropic' | 'ollama';

export interface SetupAnswers {
  userName?: string;
  assistantName?: string;
  personality?: string;
  provider: ProviderChoice;
  key?: string;
  baseUrl?: string;
  model?: string;
}

export interface ChainEntry {
  id: string;
  kind: 'openai' | 'anthropic' | 'local';
  base_url?: string;
  model?: string;
  keyless?: boolean;
}

export const PERSONAS: Record<string, string> = {
  calm: 'A calm, practical assistant for the home. Helpful, and honest about what it does not know.',
  warm: 'A warm, friendly companion. Encouraging and patient; explains things gently.',
  terse: 'A terse, technical assistant. Precise answers, no small talk.',
};

export const isFirstRun = (home: string): boolean => !existsSync(join(home, SETUP_MARKER));

export function chainEntryFor(a: SetupAnswers): ChainEntry | null {
  if (a.provider === 'local') return null;
  if (a.provider === 'ollama') return { id: 'ollama', kind: 'openai', base_url: a.baseUrl ?? 'http://127.0.0.1:11434/v1', keyless: true, ...(a.model ? { model: a.model } : {}) };
  return { id: a.provider, kind: a.provider };
}

/** Puts the entry first in settings.json providers.chain (local stays as the fallback). Returns whether the file changed. */
export function ensureChainEntry(settingsFile: string, entry: ChainEntry): boolean {
  const settings = existsSync(settingsFile) ? (JSON.parse(readFileSync(settingsFile, 'utf8')) as Record<string, unknown>) : {};
  const providers = (settings.providers ?? {}) as { chain?: ChainEntry[] };
  const chain = providers.chain ?? [{ id: 'local', kind: 'local' }];
  const existing = chain.find((e) => e.id === entry.id);
  if (existing && JSON.stringify(existing) === JSON.stringify(entry)) return false;
  providers.chain = [entry, ...chain.filter((e) => e.id !== entry.id)];
  settings.providers = providers;
  writeFileAtomic(settingsFile, `${JSON.stringify(settings, null, 2)}\n`, 0o600);
  return true;
}

export interface SetupDeps {
  out: NodeJS.WritableStream;
  interactive: boolean;
  /** Restarts the local brain so settings.json changes apply; false when it cannot (remote brain). */
  restart: () => Promise<boolean>;
}

export async function setup(conn: Connection, deps: SetupDeps): Promise<number> {
  if (!deps.interactive) {
    markDone(conn.home, { provider: 'local', interactive: false });
    deps.out.write('svc setup: no terminal, so nothing was asked: the defaults stay (the built-in local agent, template USER.md and SOUL.md).\nRun `svc setup` in a terminal to personalise, or `svc key add openai` to connect a model.\n');
    return 0;
  }
  const answers = await ask(conn);
  if (!answers) {
    p.cancel('setup cancelled; nothing was changed');
    return 1;
  }
  await apply(conn, answers, deps);
  markDone(conn.home, { provider: answers.provider, interactive: true });
  p.outro(`done. Chat with \`svc\`, or ask once with svc '<message>'.`);
  return 0;
}

async function ask(conn: Connection): Promise<SetupAnswers | null> {
  const soul = await callBrainOk<Soul>(conn, 'GET', '/api/identity/soul');
  const twin = await callBrainOk<TwinProfile>(conn, 'GET', '/api/identity/twin');
  p.intro('svc setup');
  let cancelled = false;
  const answers = await p.group(
    {
      // The current value is the placeholder and the default: Enter keeps it, typing replaces it (an
      // initialValue would be edited in place, so typing "Nova" after "svc" gave "svcNova").
      userName: () => p.text({ message: 'What should I call you?', placeholder: twin.name ?? 'your name', defaultValue: twin.name ?? '' }),
      assistantName: () =>
        p.text({ message: "What is the assistant's name?", placeholder: soul.name, defaultValue: soul.name, validate: (v) => (!v || (v.trim() && !v.includes('\n')) ? undefined : 'a name on one line, please') }),
      persona: () =>
        p.select({
          message: 'Which personality?',
          initialValue: 'keep',
          options: [{ value: 'keep', label: 'keep the current one', hint: soul.personality.slice(0, 60) }, ...Object.entries(PERSONAS).map(([value, label]) => ({ value, label }))],
        }),
      provider: () =>
        p.select<ProviderChoice>({
          message: 'Which model should answer?',
          initialValue: 'local',
          options: [
            { value: 'local', label: 'built-in local agent', hint: 'no key, no network, fixed commands' },
            { value: 'openai', label: 'OpenAI', hint: 'needs an API key' },
            { value: 'anthropic', label: 'Anthropic', hint: 'needs an API key' },
            { value: 'ollama', label: 'Ollama / llama.cpp on this network', hint: 'OpenAI-compatible server, no key' },
          ],
        }),
      key: ({ results }) => (results.provider === 'openai' || results.provider === 'anthropic' ? p.password({ message: `${results.provider} API key (stored encrypted in the vault)`, validate: (v) => (v && v.trim() ? undefined : 'paste the key') }) : Promise.resolve(undefined)),
      baseUrl: ({ results }) => (results.provider === 'ollama' ? p.text({ message: 'Server address', placeholder: 'http://127.0.0.1:11434/v1', defaultValue: 'http://127.0.0.1:11434/v1' }) : Promise.resolve(undefined)),
      model: ({ results }) => (results.provider === 'ollama' ? p.text({ message: 'Model name', placeholder: 'llama3.2', defaultValue: 'llama3.2' }) : Promise.resolve(undefined)),
    },
    {
      onCancel: () => {
        cancelled = true;
      },
    },
  );
  if (cancelled) return null;
  const persona = answers.persona;
  return {
    provider: answers.provider,
    ...(typeof answers.userName === 'string' && answers.userName.trim() ? { userName: answers.userName.trim() } : {}),
    ...(typeof answers.assistantName === 'string' ? { assistantName: answers.assistantName.trim() } : {}),
    ...(persona !== 'keep' && PERSONAS[persona] ? { personality: PERSONAS[persona] } : {}),
    ...(typeof answers.key === 'string' ? { key: answers.key.trim() } : {}),
    ...(typeof answers.baseUrl === 'string' ? { baseUrl: answers.baseUrl.trim() } : {}),
    ...(typeof answers.model === 'string' ? { model: answers.model.trim() } : {}),
  };
}

export async function apply(conn: Connection, a: SetupAnswers, deps: SetupDeps): Promise<void> {
  if (a.userName) await expectOk(callBrain(conn, 'PATCH', '/api/identity/user', { name: a.userName }), 'saving your name');
  const soul = { ...(a.assistantName ? { name: a.assistantName } : {}), ...(a.personality ? { personality: a.personality } : {}) };
  if (Object.keys(soul).length > 0) await expectOk(callBrain(conn, 'PATCH', '/api/identity/soul', soul), 'saving the persona');
  const entry = chainEntryFor(a);
  if (!entry) return;
  if (ensureChainEntry(join(conn.home, 'settings.json'), entry)) {
    deps.out.write(`added provider ${entry.id} to ${join(conn.home, 'settings.json')}\n`);
    if (!(await deps.restart())) deps.out.write('restart the brain so it uses the new provider (svc stop && svc start)\n');
  }
  if (!a.key) return;
  const r = await callBrain<AddKeyResponse & { error?: { message: string } }>(conn, 'POST', `/api/providers/${entry.id}/keys`, { label: 'default', secret: a.key, replace: true }, 30_000);
  if (r.status !== 201) throw new Error(`the key was not saved: ${r.body.error?.message ?? `HTTP ${r.status}`}`);
  deps.out.write(`key saved for ${entry.id} (probe ${r.body.probe.ok ? `ok, ${r.body.probe.models} models` : 'skipped'})\n`);
}

async function expectOk(call: Promise<{ status: number; body: unknown }>, what: string): Promise<void> {
  const r = await call;
  if (r.status !== 200) throw new Error(`${what} failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

function markDone(home: string, info: Record<string, unknown>): void {
  writeFileAtomic(join(home, SETUP_MARKER), `${JSON.stringify({ completed_at: new Date().toISOString(), ...info }, null, 2)}\n`, 0o600);
}

/** settings.json and setup.json are written whole and atomically (STYLE.md 11): temp file, fsync, rename. */
function writeFileAtomic(file: string, text: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
