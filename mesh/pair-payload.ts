// The pair URL (docs/pairing.md "The pair URL"): everything a phone, browser, node or brain needs to
// pair after scanning one QR code — where the brain can be reached (its LAN/tunnel base URLs and its
// mDNS name), the one-time token, the brain's id, when the token expires and whether a PIN is asked.
// It is a URL of its own scheme so a phone can hand it to the svc app, and its query is plain
// URLSearchParams so any language can read it:
//   svc://pair?v=1&kind=phone&brain=brn_…&token=svcpt_…&exp=1767000000&pin=1&url=http%3A%2F%2F…&mdns=host.local%3A9090
import { isPairToken } from './pair-token';

export const PAIR_URL_PREFIX = 'svc://pair?';
export const PAIR_URL_VERSION = 1;
export type PairKind = 'node' | 'phone' | 'browser' | 'brain';
export const PAIR_KINDS: readonly PairKind[] = ['node', 'phone', 'browser', 'brain'];

/** A QR code holds ~2.9 kB at its largest; the URL stays well under it so it scans from a terminal. */
export const PAIR_URL_MAX_LENGTH = 1024;
const MAX_URLS = 8;

export interface PairPayload {
  v: number;
  kind: PairKind;
  brain_id: string;
  token: string;
  /** Epoch seconds. */
  expires_at: number;
  pin_required: boolean;
  /** Base URLs (http or https) the brain answers on from other devices. */
  urls: string[];
  /** `<name>.local:<port>` when the brain advertises itself over mDNS, else null. */
  mdns: string | null;
  /**
   * Kind brain: the fingerprint of the minting brain's sync key (base64url SHA-256). The completing
   * brain pins the key it is answered with only when it has this fingerprint, so whoever answers at
   * an address of the URL cannot pass its own key off as the minting brain's.
   */
  key?: string;
}

export class PairPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairPayloadError';
  }
}

export function encodePairUrl(p: PairPayload): string {
  const q = new URLSearchParams({ v: String(p.v), kind: p.kind, brain: p.brain_id, token: p.token, exp: String(p.expires_at), pin: p.pin_required ? '1' : '0' });
  for (const url of p.urls) q.append('url', url);
  if (p.mdns !== null) q.set('mdns', p.mdns);
  if (p.key !== undefined) q.set('key', p.key);
  return `${PAIR_URL_PREFIX}${q.toString()}`;
}

const BRAIN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MDNS = /^[A-Za-z0-9-]{1,63}\.local:\d{1,5}$/;
const KEY = /^[A-Za-z0-9_-]{43}$/;

function one(q: URLSearchParams, name: string): string {
  const values = q.getAll(name);
  if (values.length !== 1) throw new PairPayloadError(`the pair URL must carry exactly one ${name}`);
  return values[0]!;
}

function baseUrl(s: string): string {
  let url: URL;
  try {
    url = new URL(s);
  } catch (err) {
    if (err instanceof TypeError) throw new PairPayloadError(`url ${JSON.stringify(s)} is not a URL`);
    throw err;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PairPayloadError(`url ${JSON.stringify(s)} is not http or https`);
  if (url.username || url.password || url.search || url.hash) throw new PairPayloadError(`url ${JSON.stringify(s)} must be a plain base URL`);
  return s;
}

/** Reads a scanned pair URL; throws PairPayloadError saying what is wrong. */
export function parsePairUrl(text: string): PairPayload {
  if (text.length > PAIR_URL_MAX_LENGTH) throw new PairPayloadError(`a pair URL is at most ${PAIR_URL_MAX_LENGTH} characters`);
  if (!text.startsWith(PAIR_URL_PREFIX)) throw new PairPayloadError(`a pair URL starts with ${PAIR_URL_PREFIX}`);
  const q = new URLSearchParams(text.slice(PAIR_URL_PREFIX.length));
  const v = Number(one(q, 'v'));
  if (v !== PAIR_URL_VERSION) throw new PairPayloadError(`pair URL version ${one(q, 'v')} is not supported (this client reads ${PAIR_URL_VERSION})`);
  const kind = one(q, 'kind');
  if (!(PAIR_KINDS as readonly string[]).includes(kind)) throw new PairPayloadError(`kind ${JSON.stringify(kind)} is not one of ${PAIR_KINDS.join(', ')}`);
  const brain = one(q, 'brain');
  if (!BRAIN_ID.test(brain)) throw new PairPayloadError('brain is not a brain id');
  const token = one(q, 'token');
  if (!isPairToken(token)) throw new PairPayloadError('token is not a pairing token');
  const exp = one(q, 'exp');
  if (!/^\d{1,12}$/.test(exp)) throw new PairPayloadError('exp is not epoch seconds');
  const pin = one(q, 'pin');
  if (pin !== '0' && pin !== '1') throw new PairPayloadError('pin is 0 or 1');
  const urls = q.getAll('url').map(baseUrl);
  if (urls.length > MAX_URLS) throw new PairPayloadError(`at most ${MAX_URLS} urls`);
  const mdnsValues = q.getAll('mdns');
  if (mdnsValues.length > 1 || (mdnsValues[0] !== undefined && !MDNS.test(mdnsValues[0]))) throw new PairPayloadError('mdns is <name>.local:<port>');
  if (urls.length === 0 && mdnsValues.length === 0) throw new PairPayloadError('the pair URL names no address of the brain');
  const keys = q.getAll('key');
  if (keys.length > 1 || (keys[0] !== undefined && !KEY.test(keys[0]))) throw new PairPayloadError('key is a key fingerprint (43 characters of base64url)');
  const payload: PairPayload = { v, kind: kind as PairKind, brain_id: brain, token, expires_at: Number(exp), pin_required: pin === '1', urls, mdns: mdnsValues[0] ?? null };
  return keys[0] === undefined ? payload : { ...payload, key: keys[0] };
}
