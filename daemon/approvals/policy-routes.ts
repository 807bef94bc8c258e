// GET and PUT /api/approvals/policies (docs/approvals.md "Changing a policy"): the policy in force, and
// one safety level's or tool's policy changed. A change is written to settings.json first (atomically,
// STYLE.md 11) and then applied to the next tool call, so a failed write changes nothing and a restart
// keeps what was set.
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { TypedRoutes } from '../http/route-kit';
import { writeFileAtomic } from '../fs/atomic-write';
import { ErrorEnvelope } from '../../protocol/errors';
import { ApprovalPolicies, ApprovalPolicyChange, type ApprovalPolicy } from '../../protocol/approvals';
import type { ApprovalSettings } from './approval-policy';

const LEVELS = ['passive', 'active', 'privileged', 'dangerous'] as const;
type Level = (typeof LEVELS)[number];

/** The policies the permission hook reads on every call; the routes change them in place. */
export type LivePolicies = Pick<ApprovalSettings, 'policies' | 'tools'>;

export const livePolicies = (settings: LivePolicies): LivePolicies => ({ policies: { ...settings.policies }, tools: { ...settings.tools } });

const isLevel = (target: string): target is Level => (LEVELS as readonly string[]).includes(target);

export const policyRoutes =
  (live: LivePolicies, settingsFile: string, logger: Logger): TypedRoutes =>
  async (app) => {
    app.get('/api/approvals/policies', { schema: { response: { 200: ApprovalPolicies } } }, async () => live);

    app.put('/api/approvals/policies', { schema: { body: ApprovalPolicyChange, response: { 200: ApprovalPolicies, 400: ErrorEnvelope } } }, async (request) => {
      const { target, policy } = request.body;
      const before = isLevel(target) ? live.policies[target] : live.tools[target];
      persist(settingsFile, target, policy);
      if (isLevel(target)) live.policies[target] = policy;
      else live.tools[target] = policy;
      logger.info({ target, before: before ?? null, policy }, 'approval policy changed');
      return live;
    });
  };

/** Sets approvals.policies.<level> or approvals.tools.<tool> in settings.json, keeping everything else. */
function persist(file: string, target: string, policy: ApprovalPolicy): void {
  const settings = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : {};
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw new Error(`${file} is not a JSON object; the policy was not changed`);
  const root = settings as Record<string, unknown>;
  const approvals = { ...(root.approvals as Record<string, unknown> | undefined) };
  const key = isLevel(target) ? 'policies' : 'tools';
  approvals[key] = { ...(approvals[key] as Record<string, unknown> | undefined), [target]: policy };
  writeFileAtomic(file, `${JSON.stringify({ ...root, approvals }, null, 2)}\n`, 0o600);
}
