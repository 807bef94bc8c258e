// The network policy of a skill's http_get/http_post (issue 16 "Skills": "resolve first and refuse
// loopback, link-local and private addresses unless allowed explicitly — no SSRF"; docs/skills.md
// "Network"). A request passes when its scheme is https (http only with `http: true`), its host is in
// the manifest's allow-list (exact, or `*.example.com` for any name below example.com), and every
// address the host resolves to is public (or `private: true`). The connection then goes to the checked
// address itself, so a second lookup cannot answer differently (DNS rebinding). Redirects are returned
// to the skill, never followed: a skill that follows one asks again and is checked again.
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PolicyRefusal, type HttpRequest, type HttpResponse } from './host-functions';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_REQUEST_BYTES = 256 * 1024;

export interface NetworkPolicy {
  allow: readonly string[];
  /** Loopback, link-local, private and other non-public addresses may be reached. */
  private?: boolean;
  /** Plain http:// may be used. */
  http?: boolean;
}
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;
export interface EgressOptions {
  lookup?: LookupAll;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** What the addresses that are not public are, by range (RFC 6890 and the IANA special-purpose registries). */
const NON_PUBLIC: readonly { net: string; prefix: number; family: 'ipv4' | 'ipv6'; what: string }[] = [
  { net: '0.0.0.0', prefix: 8, family: 'ipv4', what: 'unspecified' },
  { net: '127.0.0.0', prefix: 8, family: 'ipv4', what: 'loopback' },
  { net: '10.0.0.0', prefix: 8, family: 'ipv4', what: 'private' },
  { net: '172.16.0.0', prefix: 12, family: 'ipv4', what: 'private' },
  { net: '192.168.0.0', prefix: 16, family: 'ipv4', what: 'private' },
  { net: '169.254.0.0', prefix: 16, family: 'ipv4', what: 'link-local' },
  { net: '100.64.0.0', prefix: 10, family: 'ipv4', what: 'shared (carrier-grade NAT)' },
  { net: '224.0.0.0', prefix: 4, family: 'ipv4', what: 'multicast' },
  { net: '240.0.0.0', prefix: 4, family: 'ipv4', what: 'reserved' },
  { net: '::', prefix: 128, family: 'ipv6', what: 'unspecified' },
  { net: '::1', prefix: 128, family: 'ipv6', what: 'loopback' },
  { net: '::', prefix: 96, family: 'ipv6', what: 'IPv4-compatible' },
  { net: 'fe80::', prefix: 10, family: 'ipv6', what: 'link-local' },
  { net: 'fc00::', prefix: 7, family: 'ipv6', what: 'private' },
  { net: 'ff00::', prefix: 8, family: 'ipv6', what: 'multicast' },
];
const RANGES = NON_PUBLIC.map((r) => {
  const list = new BlockList();
  list.addSubnet(r.net, r.prefix, r.family);
  return { list, family: r.family, what: r.what };
});
const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** Why an address is not public ("loopback", ...), or null for a public one. IPv4-mapped IPv6 counts as its IPv4. */
export function nonPublicAddress(address: string): string | null {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare) === 6 ? 'ipv6' : isIP(bare) === 4 ? 'ipv4' : null;
  if (family === null) return 'not an IP address';
  if (family === 'ipv6' && MAPPED.check(bare, 'ipv6')) return nonPublicAddress(mappedIpv4(bare));
  for (const r of RANGES) if (r.family === family && r.list.check(bare, family)) return r.what;
  return null;
}

/** The IPv4 address inside ::ffff:a.b.c.d, in whichever notation it was written. */
function mappedIpv4(address: string): string {
  const hex = new URL(`http://[${address}]/`).hostname.slice(1, -1).split(':').slice(-2);
  return hex.flatMap((h) => [parseInt(h, 16) >> 8, parseInt(h, 16) & 0xff]).join('.');
}

/** Whether a hostname (lower case, no trailing dot) is named by the allow-list. */
export function hostAllowed(hostname: string, allow: readonly string[]): boolean {
  return allow.some((entry) => {
    const pattern = entry.toLowerCase().replace(/\.$/, '');
    return pattern.startsWith('*.') ? hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1 : hostname === pattern;
  });
}

/** The URL's destination checked against the policy: the URL and the address to connect to. */
export async function checkDestination(raw: string, policy: NetworkPolicy, lookup: LookupAll): Promise<{ url: URL; target: ResolvedAddress }> {
  const url = parseUrl(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.http === true)) throw new PolicyRefusal(`${url.protocol}// is not allowed for ${url.host} (https only unless the manifest sets network.http)`);
  if (url.username !== '' || url.password !== '') throw new PolicyRefusal('URLs with credentials are not allowed');
  const hostname = bareHost(url);
  if (!hostAllowed(hostname, policy.allow)) throw new PolicyRefusal(`${hostname} is not in the manifest's network allow-list`);
  const addresses = isIP(hostname) !== 0 ? [{ address: hostname, family: isIP(hostname) as 4 | 6 }] : await lookup(hostname);
  if (addresses.length === 0) throw new Error(`${hostname} did not resolve`);
  if (policy.private !== true) {
    for (const a of addresses) {
      const why = nonPublicAddress(a.address);
      if (why !== null) throw new PolicyRefusal(`${hostname} resolves to ${a.address}, a ${why} address (the manifest does not set network.private)`);
    }
  }
  return { url, target: addresses[0]! };
}

function parseUrl(raw: string): URL {
  try {
    return new URL(raw);
  } catch (err) {
    if (err instanceof TypeError) throw new PolicyRefusal(`not a URL: ${raw.slice(0, 200)}`);
    throw err;
  }
}

const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();

const systemLookup: LookupAll = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** The http function a skill host gets for one manifest's policy. */
export function createEgress(policy: NetworkPolicy, options: EgressOptions = {}): (request: HttpRequest) => Promise<HttpResponse> {
  const lookup = options.lookup ?? systemLookup;
  return async (request) => {
    if (request.body !== undefined && Buffer.byteLength(request.body) > MAX_REQUEST_BYTES) throw new Error(`the request body is larger than ${MAX_REQUEST_BYTES} bytes`);
    const { url, target } = await checkDestination(request.url, policy, lookup);
    return send(url, target, request, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  };
}

/** One request to the checked address: node's resolver is replaced by one that answers only it. */
function send(url: URL, target: ResolvedAddress, request: HttpRequest, timeoutMs: number, maxBytes: number): Promise<HttpResponse> {
  const pinned: LookupFunction = (_host, opts, callback) =>
    opts.all === true ? callback(null, [target]) : callback(null, target.address, target.family);
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = make(url, { method: request.method, headers: request.headers ?? {}, lookup: pinned }, (res) => void readBody(res, maxBytes).then(resolve, reject));
    // The whole exchange, body included, within timeoutMs.
    const timer = setTimeout(() => req.destroy(new Error(`no complete answer from ${url.host} within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(request.body);
  });
}

function readBody(res: IncomingMessage, maxBytes: number): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) res.destroy(new Error(`the response is larger than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    res.on('error', reject);
    res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: flatHeaders(res), body: Buffer.concat(chunks).toString('utf8') }));
  });
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
