// svc identity (spec 4.14): the agent's name, personality, rules and style (SOUL.md), and USER.md.
//   svc identity                  name, personality, rules, style, and who the user is
//   svc identity user             prints USER.md
//   svc identity soul             prints SOUL.md
//   svc identity set-user <file>  replaces USER.md (- reads stdin); refused if it changed meanwhile
//   svc identity set-soul <file>  replaces SOUL.md
import { readFileSync } from 'node:fs';
import type { IdentityFile, Soul, TwinProfile } from '../../protocol/identity';
import { callBrain, type Connection } from '../connection';
import { formatSoul } from './chat';

export const IDENTITY_ACTIONS = ['show', 'user', 'soul', 'set-user', 'set-soul'] as const;

interface ErrorBody {
  error?: { message?: string };
}

export async function identity(conn: Connection, action: string | undefined, file: string | undefined, json: boolean, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  switch (action ?? 'show') {
    case 'show': {
      const soul = await get<Soul>(conn, '/api/identity/soul');
      const twin = await get<TwinProfile>(conn, '/api/identity/twin');
      if (json) out.write(`${JSON.stringify({ name: soul.name, personality: soul.personality, rules: soul.rules, style: soul.style, user: twin.name })}\n`);
      else out.write(`${formatSoul(soul)}\nuser:        ${twin.name ?? '(not set: run `svc setup` or edit USER.md)'}\n`);
      return 0;
    }
    case 'user':
    case 'soul': {
      const f = await get<IdentityFile>(conn, action === 'user' ? '/api/identity/user' : '/api/identity/soul');
      out.write(json ? `${JSON.stringify(f)}\n` : f.content);
      return 0;
    }
    case 'set-user':
    case 'set-soul': {
      if (!file) {
        err.write(`svc: identity ${action} needs a file (or - for stdin)\n`);
        return 2;
      }
      const path = action === 'set-user' ? '/api/identity/user' : '/api/identity/soul';
      const current = await get<IdentityFile>(conn, path);
      const content = readFileSync(file === '-' ? 0 : file, 'utf8');
      const r = await callBrain<IdentityFile & ErrorBody>(conn, 'PUT', path, { content, revision: current.revision });
      if (r.status !== 200) {
        err.write(`svc: ${r.body.error?.message ?? `HTTP ${r.status}`}\n`);
        return 1;
      }
      out.write(`${action === 'set-user' ? 'USER.md' : 'SOUL.md'} updated (revision ${r.body.revision})\n`);
      return 0;
    }
    default:
      err.write(`svc: unknown identity action '${action}'; expected one of ${IDENTITY_ACTIONS.join(', ')}\n`);
      return 2;
  }
}

async function get<T>(conn: Connection, path: string): Promise<T> {
  const r = await callBrain<T & ErrorBody>(conn, 'GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.body.error?.message ?? `HTTP ${r.status}`}`);
  return r.body;
}
