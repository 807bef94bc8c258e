// Reads a skill directory (issue 16 "Skills"; docs/skills.md "The manifest"): `manifest.json` checked
// against protocol/skills.ts, and the entry it names, which must be a plain .js file right inside the
// directory (no path, no symbolic link). Sizes are bounded before anything is read. The answer is a
// typed skill or every problem found, each "<where>: <what>".
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { SkillManifest } from '../protocol/skills';

export const MAX_MANIFEST_BYTES = 64 * 1024;
export const MAX_ENTRY_BYTES = 1024 * 1024;
export const PYTHON_REFUSED = 'svc runs JavaScript skills in a QuickJS sandbox; impl.py is not supported';

export interface Skill {
  dir: string;
  manifest: SkillManifest;
  source: string;
}
export type SkillDirResult = { ok: true; skill: Skill } | { ok: false; problems: string[] };

const check = TypeCompiler.Compile(SkillManifest);

export async function readSkillDir(dir: string): Promise<SkillDirResult> {
  const text = await readBounded(join(dir, 'manifest.json'), MAX_MANIFEST_BYTES);
  if (typeof text !== 'string') return { ok: false, problems: [`manifest.json: ${text.problem}`] };
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, problems: [`manifest.json: ${parsed.problem}`] };
  const problems = manifestProblems(parsed.value);
  if (problems.length > 0 || !check.Check(parsed.value)) return { ok: false, problems };
  const manifest = parsed.value;
  const source = await readBounded(join(dir, manifest.entry), MAX_ENTRY_BYTES);
  if (typeof source !== 'string') return { ok: false, problems: [`${manifest.entry}: ${source.problem}`] };
  return { ok: true, skill: { dir, manifest, source } };
}

/** Every problem of a parsed manifest; a Python entry is named first, in words a user can act on. */
export function manifestProblems(value: unknown): string[] {
  const out: string[] = [];
  const entry = typeof value === 'object' && value !== null ? (value as { entry?: unknown }).entry : undefined;
  if (typeof entry === 'string' && entry.toLowerCase().endsWith('.py')) out.push(`/entry ${PYTHON_REFUSED}`);
  for (const e of check.Errors(value)) {
    if (out.length >= 20) break;
    if (e.path === '/entry' && out.length > 0 && out[0]!.startsWith('/entry ')) continue;
    out.push(`${e.path || '/'} ${e.message}`);
  }
  return out;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problem: `not JSON (${(error as Error).message})` };
  }
}

/** A regular file's text when it is not larger than `max`; a missing file or a link is a problem. */
async function readBounded(path: string, max: number): Promise<string | { problem: string }> {
  const stat = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (stat === null) return { problem: 'missing' };
  if (!stat.isFile()) return { problem: 'not a regular file (links and folders are refused)' };
  if (stat.size > max) return { problem: `larger than ${max} bytes` };
  return readFile(path, 'utf8');
}
