// A routing correction ("that was a home question") is answered by the router itself, without a
// model: the preference is stored durably first, then acknowledged (spec 1.2 learned preferences).
import type { SpecialistName } from '../../protocol/session';
import type { Router } from './router/router';
import type { FinishReason, TurnState } from './turn-runner';

const quote = (s: string): string => (s.length > 80 ? `${s.slice(0, 77)}…` : s);

export async function respondToCorrection(router: Router, state: TurnState, to: SpecialistName, say: (text: string) => void): Promise<FinishReason> {
  state.provider = 'router';
  state.model = 'preferences';
  const previous = state.session.lastRoutedText;
  if (previous === null) {
    say(`There is no earlier question in this session to re-route. Ask it again and, if I route it wrong, tell me it was a ${to} question.`);
    return 'stop';
  }
  await router.learn(previous, to);
  say(`Noted: I'll send questions like “${quote(previous)}” to the ${to} specialist from now on.`);
  return 'stop';
}
