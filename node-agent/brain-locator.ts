// Which brain a node-agent talks to (docs/node-agent.md): --brain, else $SVC_BRAIN_URL, else the first
// brain that answers an mDNS query for `_feral-brain._tcp` (the node protocol service every svc brain in
// lan mode advertises, and HUP brains too; mesh/mdns-records.ts). The search is bounded: a board on a
// network without a brain says so and names the option, instead of waiting forever.
import type { DiscoveredService } from '../mesh/mdns-records';
import { parseBrainUrl } from '../mesh/brain-url';

/** How long the mDNS search waits for an answer (a brain answers a query within ~1 s; queries repeat). */
export const DISCOVERY_MS = 10_000;

export interface LocatedBrain {
  url: string;
  /** How it was found, for the line that tells the person. */
  via: '--brain' | 'SVC_BRAIN_URL' | 'mDNS';
  /** The mDNS instance name when found that way. */
  name?: string;
}

export class NoBrainError extends Error {}

export interface LocateInput {
  flag: string | undefined;
  env: string | undefined;
  /** mesh/mdns.ts discover() of the node service, bounded by `timeoutMs`. */
  discover(timeoutMs: number): Promise<DiscoveredService | null>;
  timeoutMs?: number;
}

export async function locateBrain(input: LocateInput): Promise<LocatedBrain> {
  if (input.flag !== undefined) return { url: input.flag, via: '--brain' };
  if (input.env !== undefined && input.env !== '') {
    const parsed = parseBrainUrl(input.env);
    if ('problem' in parsed) throw new NoBrainError(`SVC_BRAIN_URL ${parsed.problem}`);
    return { url: parsed.url, via: 'SVC_BRAIN_URL' };
  }
  const found = await input.discover(input.timeoutMs ?? DISCOVERY_MS);
  if (found === null) throw new NoBrainError('no brain found on this network; give --brain http://<brain address>:9090 (on the brain, `svc access lan` lets boards find it)');
  return { url: found.baseUrl, via: 'mDNS', name: found.name };
}
