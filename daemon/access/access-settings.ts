// The access capability's section of settings.json (docs/access.md, docs/configuration.md) and its
// writer. `svc access lan|localhost|remote-up|remote-down` change `mode` and `remote` there first,
// atomically (STYLE.md 11, as PUT /api/approvals/policies does), so a failed write changes nothing and
// a restart keeps what was set; everything else in the file is left as it was.
import { existsSync, readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { writeFileAtomic } from '../fs/atomic-write';
import { AppError } from '../kernel/errors';

export const AccessSettings = Type.Object(
  {
    mode: Type.Union([Type.Literal('localhost'), Type.Literal('lan')], {
      default: 'localhost',
      description: 'localhost: listen on 127.0.0.1 and ::1 only; lan: on every interface (0.0.0.0 and ::). Ignored while server.host, SVC_HOST or --host pins the address',
    }),
    remote: Type.Boolean({ default: false, description: 'Also reachable on the tailnet through Tailscale Serve (svc access remote-up); brought up again at start' }),
    address_poll_seconds: Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 30,
      description: 'How often the machine\'s addresses are read while reachable beyond loopback; a change is announced (0: never)',
    }),
  },
  { additionalProperties: false, default: {}, description: 'Who can reach the brain (docs/access.md)' },
);
export type AccessSettings = Static<typeof AccessSettings>;

export type PersistedAccess = Pick<AccessSettings, 'mode' | 'remote'>;

/** Sets access.mode and access.remote in settings.json, keeping every other key. */
export function persistAccess(file: string, access: PersistedAccess): void {
  const settings = readSettings(file);
  const root = settings;
  const section = { ...(root.access as Record<string, unknown> | undefined), mode: access.mode, remote: access.remote };
  writeFileAtomic(file, `${JSON.stringify({ ...root, access: section }, null, 2)}\n`, 0o600);
}

/** The file as it is now (edited since the start, perhaps): a file that is not a JSON object is a 409. */
function readSettings(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    settings = undefined;
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new AppError('CONFLICT', `${file} is not a JSON object; the access mode was not changed`, { file, fix: 'repair settings.json (`svc doctor` checks it), then try again' });
  }
  return settings as Record<string, unknown>;
}
