// `phone-bridge pair <pair-url>` (docs/phone-bridge.md "Pairing"): what a phone app does after it
// scanned the QR code `svc bridge pair` shows. It reads the pair URL (mesh/pair-payload.ts), verifies
// the PIN when the URL says one is required, completes the pairing at the first of the URL's addresses
// that answers (POST /api/devices/pair/complete), and keeps the node key it gets as the node-agent
// does (`<key dir>/<node_id>.key`, 0600). The token must be of kind node: only a node key opens /v1/node.
import type { CompletePairResponse } from '../protocol/pairing';
import { PairPayloadError, parsePairUrl, type PairPayload } from '../mesh/pair-payload';
import { writeNodeKey } from '../mesh/node-key-store';

export interface PairInput {
  url: string;
  keyDir: string;
  name: string | undefined;
  pin: string | undefined;
  platform: 'ios' | 'android';
}

export interface PairDeps {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
}

export const EXIT_PAIRED = 0;
export const EXIT_NOT_PAIRED = 1;
export const EXIT_USAGE = 2;

/** Where to try the brain, in the URL's order; the mDNS name last. */
export function candidateBases(payload: PairPayload): string[] {
  return [...payload.urls.map((u) => u.replace(/\/+$/, '')), ...(payload.mdns === null ? [] : [`http://${payload.mdns}`])];
}

interface ErrorBody {
  error?: { message?: string; details?: { command?: string; attempts_left?: number } | null };
}

const errorText = async (r: Response): Promise<string> => {
  const body = (await r.json().catch((err: unknown) => {
    if (err instanceof SyntaxError) return null;
    throw err;
  })) as ErrorBody | null;
  const e = body?.error;
  const command = e?.details?.command;
  return `${e?.message ?? `HTTP ${r.status}`}${command ? ` (${command})` : ''}`;
};

/** fetch's own failure to reach an address (refused, unreachable, DNS): the next address is tried. */
const unreachable = (err: unknown): boolean => err instanceof TypeError;

export async function pairFromUrl(input: PairInput, deps: PairDeps): Promise<number> {
  let payload: PairPayload;
  try {
    payload = parsePairUrl(input.url.trim());
  } catch (err) {
    if (!(err instanceof PairPayloadError)) throw err;
    deps.err.write(`phone-bridge: ${err.message}\n`);
    return EXIT_USAGE;
  }
  if (payload.kind !== 'node') {
    deps.err.write(`phone-bridge: this pair URL is for a ${payload.kind}; a phone bridge needs a node pairing (on the brain: svc bridge pair)\n`);
    return EXIT_USAGE;
  }
  if (payload.pin_required && input.pin === undefined) {
    deps.err.write('phone-bridge: this pairing needs the PIN shown next to the code: give --pin\n');
    return EXIT_USAGE;
  }
  for (const base of candidateBases(payload)) {
    try {
      return await pairAt(base, payload, input, deps);
    } catch (err) {
      if (!unreachable(err)) throw err;
      deps.err.write(`phone-bridge: ${base} did not answer; trying the next address\n`);
    }
  }
  deps.err.write('phone-bridge: none of the addresses in the pair URL answered (is the brain in `svc access lan` mode, and this device on its network?)\n');
  return EXIT_NOT_PAIRED;
}

async function pairAt(base: string, payload: PairPayload, input: PairInput, deps: PairDeps): Promise<number> {
  const post = (path: string, body: unknown): Promise<Response> => deps.fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (payload.pin_required) {
    const verified = await post('/api/devices/pair/verify_pin', { token: payload.token, pin: input.pin });
    if (verified.status !== 200) {
      deps.err.write(`phone-bridge: the PIN was refused: ${await errorText(verified)}\n`);
      return EXIT_NOT_PAIRED;
    }
  }
  const r = await post('/api/devices/pair/complete', { token: payload.token, platform: input.platform, ...(input.name === undefined ? {} : { name: input.name }) });
  if (r.status !== 201) {
    deps.err.write(`phone-bridge: pairing refused: ${await errorText(r)}\n`);
    return EXIT_NOT_PAIRED;
  }
  const paired = (await r.json()) as CompletePairResponse;
  if (paired.node_id === null) {
    deps.err.write('phone-bridge: the brain paired a device without a node_id; a bridge needs one (svc bridge pair mints it)\n');
    return EXIT_NOT_PAIRED;
  }
  if (paired.brain_id !== payload.brain_id) deps.err.write(`phone-bridge: note: ${base} is brain ${paired.brain_id}, the code named ${payload.brain_id}\n`);
  const path = await writeNodeKey(input.keyDir, paired.node_id, paired.device_key);
  deps.out.write(`paired bridge ${paired.node_id} ("${paired.name}") as ${paired.device_id}\n`);
  deps.out.write(`node key: ${path}\n`);
  deps.out.write(`run it: phone-bridge run --brain ${base} --node-id ${paired.node_id}\n`);
  return EXIT_PAIRED;
}
