// The brain's one error type. Services throw AppError with a catalogue code; the HTTP error handler
// turns it into the spec 7 envelope. Anything else reaching the handler is a bug: logged, answered 500.
import { ERROR_CODES, type ErrorCode } from '../../protocol/errors';

export class AppError extends Error {
  readonly code: ErrorCode | (string & {});
  readonly status: number;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown);
  constructor(code: string, message: string, details: unknown, status: number);
  constructor(code: string, message: string, details: unknown = null, status?: number) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = status ?? ERROR_CODES[code as ErrorCode] ?? 500;
    this.details = details ?? null;
  }
}

export const notFound = (what: string, id: string): AppError =>
  new AppError('NOT_FOUND', `${what} ${JSON.stringify(id)} not found`, { [what]: id });

export const badRequest = (message: string, details?: unknown): AppError => new AppError('BAD_REQUEST', message, details);

/**
 * A manifest that is unsigned, altered or signed by a key the brain does not trust (spec 5.1 rule 3):
 * answered 422 with the body {error: "UnverifiedManifest", reason, message} (spec 7), not the envelope.
 * Reasons: signing/ verdicts (malformed, unknown_key, key_mismatch, signature_mismatch, digest_mismatch)
 * and the installer's own (unsigned, manifest_mismatch, file_mismatch).
 */
export class UnverifiedManifestError extends Error {
  override name = 'UnverifiedManifestError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}
