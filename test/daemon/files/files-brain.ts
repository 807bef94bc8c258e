// A brain assembled in-process with only the files capability, on a fresh home, and a temp folder
// to grant: shared by the files tests.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filesCapability } from '../../../daemon/files/files-capability';
import type { ToolContext, ToolOutcome } from '../../../daemon/kernel/tool';
import { inProcessBrain } from '../../helpers/assembled-brain';

export async function filesBrain(t: { after(fn: () => Promise<void>): void }) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-files-')));
  mkdirSync(join(dir, 'docs'));
  mkdirSync(join(dir, 'private'));
  const { brain, token } = await inProcessBrain(t, { capabilities: [filesCapability] });
  t.after(async () => rmSync(dir, { recursive: true, force: true }));
  const headers = { authorization: `Bearer ${token}` };
  const ctx: ToolContext = { sessionId: 's', turnId: 't', specialist: 'general', signal: new AbortController().signal };
  /** Calls a tool as the agent would: arguments validated against its schema, then run. */
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
    const problems = brain.tools.problems(name, args);
    if (problems.length > 0) throw new Error(`invalid arguments: ${problems.join('; ')}`);
    return brain.tools.get(name)!.run(args, ctx);
  };
  const grant = async (path: string, extra: Record<string, unknown> = {}) => {
    const r = await brain.app.inject({ method: 'POST', url: '/api/grants', headers, payload: { path, ...extra } });
    if (r.statusCode !== 201) throw new Error(`grant ${path}: ${r.statusCode} ${r.body}`);
  };
  return { brain, dir, headers, call, grant };
}
