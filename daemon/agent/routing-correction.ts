// A routing correction ("that was a home question") is answered by the router itself, without a
// model: the preference is stored durably first, then acknowledged (spec 1.2 learned preferences).
// The turn runner reports such a turn as answered by CORRECTION_SOURCE and finishes it with 'stop'.
import type { SpecialistName } from '../../protocol/session';
import { clip } from '../kernel/text';
import type { Router } from './router/router';

/** The provider and model a turn answered by a routing correction reports. */
export const CORRECTION_SOURCE = { provider: 'router', model: 'preferences' } as const;

/**
 * Learns that `previous` (the session's last routed question, null when there is none) is a `to`
 * question, and returns the acknowledgement to say. Throws what the router's store throws.
 */
export async function respondToCorrection(router: Router, previous: string | null, to: SpecialistName): Promise<string> {
  if (previous === null) return `There is no earlier question in this session to re-route. Ask it again and, if I route it wrong, tell me it was a ${to} question.`;
  await router.learn(previous, to);
  return `Noted: I'll send questions like “${clip(previous, 80)}” to the ${to} specialist from now on.`;
}
