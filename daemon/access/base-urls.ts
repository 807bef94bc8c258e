// The base URLs another device can use to reach the brain (the `urls` of the access_mode event and of
// GET /api/access/status): one per address of this machine that the listener covers, loopback left
// out (it is this machine itself), and IPv6 link-local addresses too (fe80::/10 needs a zone, which
// browsers and most HTTP clients do not accept in a URL).
import type { NetworkInterfaceInfo } from 'node:os';
import { covered, type ListenAddress } from '../kernel/listener';

/** What os.networkInterfaces() returns. */
export type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

const linkLocal = (address: string): boolean => /^fe[89ab][0-9a-f]:/i.test(address);

export function baseUrls(bound: readonly ListenAddress[], interfaces: Interfaces): string[] {
  const port = bound[0]?.port;
  if (port === undefined) return [];
  const urls: string[] = [];
  for (const entries of Object.values(interfaces)) {
    for (const entry of entries ?? []) {
      if (entry.internal || (entry.family === 'IPv6' && linkLocal(entry.address))) continue;
      if (!covered(bound, entry.address)) continue;
      const url = entry.family === 'IPv6' ? `http://[${entry.address}]:${port}` : `http://${entry.address}:${port}`;
      if (!urls.includes(url)) urls.push(url);
    }
  }
  // IPv4 first: the address people read and type.
  return [...urls.filter((u) => !u.startsWith('http://[')), ...urls.filter((u) => u.startsWith('http://['))];
}
