// The brain's names for an external MCP server's tools (docs/mcp.md "Naming"). The tool registry
// takes `^[a-z][a-z0-9_]{0,63}$`; MCP tool names are free text (`get-sum`, `read_text_file`,
// `Search Issues`). A tool of server `fs` named `read_text_file` is `mcp_fs_read_text_file`: lower
// case, every run of other characters one `_`. Server names hold no `_` (protocol/mcp.ts SERVER_NAME),
// so the prefix names one server. Two names of one server that fold to the same slug, and a name past
// 64 characters, end in `_` and six hex digits of the SHA-256 of the server's own name instead: the
// mapping depends on nothing but the server's current list, never on the order it came in.
import { createHash } from 'node:crypto';

export const MCP_TOOL_PREFIX = 'mcp_';
const MAX = 64;
const HASH = 6;

/** `Search Issues` → `search_issues`; empty → `tool`. */
export function slug(remote: string): string {
  const s = remote
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return s === '' ? 'tool' : s;
}

const hashOf = (remote: string): string => createHash('sha256').update(remote).digest('hex').slice(0, HASH);

/** The brain's name of each remote tool of `server` (remote name → brain name). */
export function brainToolNames(server: string, remotes: readonly string[]): Map<string, string> {
  const prefix = `${MCP_TOOL_PREFIX}${server}_`;
  const bySlug = new Map<string, number>();
  for (const r of new Set(remotes)) bySlug.set(slug(r), (bySlug.get(slug(r)) ?? 0) + 1);
  const out = new Map<string, string>();
  for (const remote of remotes) {
    const plain = prefix + slug(remote);
    const clash = (bySlug.get(slug(remote)) ?? 0) > 1;
    if (!clash && plain.length <= MAX) {
      out.set(remote, plain);
      continue;
    }
    const room = MAX - HASH - 1;
    out.set(remote, `${plain.slice(0, room).replace(/_+$/, '')}_${hashOf(remote)}`);
  }
  return out;
}
