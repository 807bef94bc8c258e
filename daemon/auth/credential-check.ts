// core.credentials (kernel/capability.ts CredentialCheck): the brain's verifiers asked from inside a
// socket handler that must refuse in its own protocol (/v1/node closes with 4001 instead of an HTTP
// 401). The capabilities are created before all verifiers are known, so the list is bound afterwards.
import type { CredentialCheck } from '../kernel/capability';
import type { CredentialVerifier } from './authenticate';

export class LateCredentialCheck {
  private verifiers: readonly CredentialVerifier[] | null = null;

  readonly check: CredentialCheck = {
    verify: (token) => {
      if (this.verifiers === null) throw new Error('credentials asked for before the brain bound its verifiers');
      if (token === '') return undefined;
      for (const verifier of this.verifiers) {
        const principal = verifier.verify({ scheme: 'bearer', token });
        if (principal === undefined) continue;
        if (principal.kind === 'anonymous') return undefined;
        return principal;
      }
      return undefined;
    },
  };

  bind(verifiers: readonly CredentialVerifier[]): void {
    this.verifiers = verifiers;
  }
}
