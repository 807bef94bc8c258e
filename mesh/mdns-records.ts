// What the brain advertises over mDNS/DNS-SD (RFC 6762, 6763) and how a browser reads it back
// (docs/mesh.md, "What is advertised"). Pure: no sockets here (mesh/mdns.ts does the I/O), so the
// records and the parser of what arrives from the network are tested on their own.
import { isIP } from 'node:net';

/** The DNS-SD service types (without the leading underscore and `._tcp`). */
export const SERVICE_TYPES = {
  /** The brain's API, for the svc client, phones, browsers and other brains. */
  api: 'svc',
  /** The node protocol endpoint, for HUP node SDKs and node-agent (node-protocol.md, Transport). */
  node: 'feral-brain',
  /** Brain-to-brain sync: how brains find their peers (SVC_SYNC_DISABLED=1 withdraws it). */
  sync: 'svc-sync',
} as const;

export type ServiceKind = keyof typeof SERVICE_TYPES;

/** Paths a discovered brain serves each service on. */
export const SERVICE_PATHS: Readonly<Record<ServiceKind, string>> = { api: '/api', node: '/v1/node', sync: '/sync' };

/** The protocol version a `_feral-brain._tcp` TXT record carries (node SDKs check it). */
export const NODE_PROTOCOL_VERSION = '1';
/** The version of the sync advertisement's TXT layout. */
export const SYNC_TXT_VERSION = '1';

export interface BrainAdvertisement {
  brainId: string;
  /** svc's version, for the `_svc._tcp` TXT record. */
  version: string;
  port: number;
  tls: boolean;
  /** The machine's host name, one label (os.hostname()); advertised as `<label>.local`. */
  hostname: string;
  /** Advertise the sync service too (off with SVC_SYNC_DISABLED=1). */
  sync: boolean;
}

/** One service to publish, in bonjour-service's terms. */
export interface ServiceRecord {
  kind: ServiceKind;
  name: string;
  type: string;
  host: string;
  port: number;
  txt: Record<string, string>;
}

/**
 * The first label of a host name, as a DNS label mDNS hosts accept: lower case, letters, digits
 * and hyphens, at most 63 characters; `svc` when nothing is left. A `.local` host of any other shape
 * cannot be resolved by avahi (ARCHITECTURE.md, mDNS).
 */
export function hostLabel(hostname: string): string {
  const label = (hostname.split('.')[0] ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return label === '' ? 'svc' : label;
}

/** `<label>.local`: the host the services' SRV records point at, answered by the brain itself. */
export const mdnsHost = (hostname: string): string => `${hostLabel(hostname)}.local`;

/**
 * The service instance name: host label and the first 8 characters of the brain id, so two brains
 * on machines of the same name (two Pis called raspberrypi) do not collide, and a brain keeps its
 * name across restarts (RFC 6763 §4.1 wants it stable).
 */
export const instanceName = (ad: Pick<BrainAdvertisement, 'hostname' | 'brainId'>): string => `svc-${hostLabel(ad.hostname)}-${ad.brainId.slice(0, 8)}`;

/** The services a brain advertises, with their TXT records (docs/mesh.md lists each key). */
export function brainServices(ad: BrainAdvertisement): ServiceRecord[] {
  const base = { name: instanceName(ad), host: mdnsHost(ad.hostname), port: ad.port };
  const tls = ad.tls ? '1' : '0';
  const services: ServiceRecord[] = [
    { ...base, kind: 'api', type: SERVICE_TYPES.api, txt: { version: ad.version, brain_id: ad.brainId, api_path: SERVICE_PATHS.api, tls } },
    { ...base, kind: 'node', type: SERVICE_TYPES.node, txt: { version: NODE_PROTOCOL_VERSION, node_path: SERVICE_PATHS.node, tls } },
  ];
  if (ad.sync) services.push({ ...base, kind: 'sync', type: SERVICE_TYPES.sync, txt: { version: SYNC_TXT_VERSION, brain_id: ad.brainId, sync_path: SERVICE_PATHS.sync, tls } });
  return services;
}

/** A service found on the network, checked: what a node-agent or a peer needs to connect. */
export interface DiscoveredService {
  kind: ServiceKind;
  /** The instance name (`svc-pi-1a2b3c4d`). */
  name: string;
  /** The SRV target (`pi.local`). */
  host: string;
  port: number;
  /** The host's IP addresses from the A/AAAA records that came with the answer (may be empty). */
  addresses: string[];
  /** Absent when the TXT record carries none (the node service has no brain id). */
  brainId: string | null;
  tls: boolean;
  /** The path of the service (api_path, node_path or sync_path). */
  path: string;
  /** `http(s)://<first IPv4, else IPv6, else host>:<port>`: where to connect. */
  baseUrl: string;
  txt: Record<string, string>;
}

/** The fields of a resolved service as bonjour-service reports it; anything may be missing or odd. */
export interface RawService {
  name?: unknown;
  type?: unknown;
  host?: unknown;
  port?: unknown;
  addresses?: unknown;
  txt?: unknown;
}

const PATH_KEY: Readonly<Record<ServiceKind, string>> = { api: 'api_path', node: 'node_path', sync: 'sync_path' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SAFE_PATH = /^\/[A-Za-z0-9._~/-]{0,200}$/;
const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?$/;

/** A value from the network for a log line (String() throws on an object without a prototype). */
const shown = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value).slice(0, 80) : typeof value);

const kindOf = (type: string): ServiceKind | undefined => (Object.keys(SERVICE_TYPES) as ServiceKind[]).find((k) => SERVICE_TYPES[k] === type);

/** TXT values as strings; keys lower-cased (RFC 6763 §6.4: keys are case-insensitive); non-strings dropped. */
function txtStrings(txt: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (txt === null || typeof txt !== 'object') return out;
  for (const [key, value] of Object.entries(txt as Record<string, unknown>)) {
    if (typeof value === 'string' && key.length > 0 && key.length <= 64) out[key.toLowerCase()] = value;
  }
  return out;
}

/**
 * A service as bonjour-service resolved it, checked, or the reason it is ignored. Everything here came
 * from the network: a brain id that is not a UUID, a path that is not a plain absolute path, a port
 * out of range or a tls flag other than 0/1 makes the service unusable rather than half-trusted.
 */
export function readService(raw: RawService): { service: DiscoveredService } | { ignored: string } {
  const kind = typeof raw.type === 'string' ? kindOf(raw.type) : undefined;
  if (kind === undefined) return { ignored: `not a service svc knows: ${shown(raw.type)}` };
  if (typeof raw.name !== 'string' || raw.name === '' || raw.name.length > 63) return { ignored: 'no instance name' };
  if (typeof raw.host !== 'string' || !HOST.test(raw.host) || raw.host.length > 253) return { ignored: `bad host ${shown(raw.host)}` };
  if (typeof raw.port !== 'number' || !Number.isInteger(raw.port) || raw.port < 1 || raw.port > 65535) return { ignored: `bad port ${shown(raw.port)}` };
  const txt = txtStrings(raw.txt);
  const tlsFlag = txt.tls ?? '0';
  if (tlsFlag !== '0' && tlsFlag !== '1') return { ignored: `bad tls flag ${shown(tlsFlag)}` };
  const path = txt[PATH_KEY[kind]] ?? SERVICE_PATHS[kind];
  if (!SAFE_PATH.test(path)) return { ignored: `bad ${PATH_KEY[kind]}` };
  const brainId = txt.brain_id ?? null;
  if (brainId !== null && !UUID.test(brainId)) return { ignored: 'bad brain_id' };
  if (kind !== 'node' && brainId === null) return { ignored: 'no brain_id' };
  const addresses = Array.isArray(raw.addresses) ? raw.addresses.filter((a): a is string => typeof a === 'string' && isIP(a) !== 0) : [];
  const tls = tlsFlag === '1';
  const host = raw.host.replace(/\.$/, '');
  return { service: { kind, name: raw.name, host, port: raw.port, addresses, brainId, tls, path, baseUrl: baseUrl(tls, addresses, host, raw.port), txt } };
}

/** Prefers an IPv4 address, then a global IPv6 one (a link-local one needs a zone the URL cannot carry), then the host name. */
function baseUrl(tls: boolean, addresses: readonly string[], host: string, port: number): string {
  const v4 = addresses.find((a) => isIP(a) === 4);
  const v6 = addresses.find((a) => isIP(a) === 6 && !a.toLowerCase().startsWith('fe80:'));
  const authority = v4 ?? (v6 !== undefined ? `[${v6}]` : host);
  return `${tls ? 'https' : 'http'}://${authority}:${port}`;
}
