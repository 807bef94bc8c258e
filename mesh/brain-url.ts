// A brain's base URL as a node gives it (--brain, SVC_BRAIN_URL, a config file): http or https, no
// credentials, query or fragment; kept with its path prefix and without a trailing slash. Shared by
// the node-agent and the phone bridge.

/** The URL to use, or why the input is not one. */
export function parseBrainUrl(input: string): { url: string } | { problem: string } {
  let u: URL;
  try {
    u = new URL(input);
  } catch (err) {
    if (err instanceof TypeError) return { problem: `"${input.slice(0, 80)}" is not a URL (give http://host:port)` };
    throw err;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { problem: `"${input.slice(0, 80)}" is not an http:// or https:// URL` };
  if (u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '') return { problem: `"${input.slice(0, 80)}": give the brain's address only (no user, query or fragment)` };
  return { url: `${u.origin}${u.pathname.replace(/\/+$/, '')}` };
}
