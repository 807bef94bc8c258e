// One error handler and one not-found handler (STYLE.md 9): every error leaves as the spec 7
// envelope {error: {code, message, details}}. 5xx are logged at error with the request id and never
// leak a stack or an internal message; 4xx are logged at info.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorCode, type ErrorEnvelope, type FieldError } from '../../protocol/errors';
import { AppError } from '../errors';

// The generic code for a status is the first one listed for it in the catalogue (503 → UNAVAILABLE, not VAULT_LOCKED).
const CODE_BY_STATUS = new Map<number, ErrorCode>();
for (const [code, status] of Object.entries(ERROR_CODES)) if (!CODE_BY_STATUS.has(status)) CODE_BY_STATUS.set(status, code as ErrorCode);

export function envelope(code: string, message: string, details: unknown = null): ErrorEnvelope {
  return { error: { code, message, details: details ?? null } };
}

function validationFields(err: FastifyError): FieldError[] {
  const where = err.validationContext ?? 'body';
  return (err.validation ?? []).map((v) => {
    const missing = v.keyword === 'required' ? `/${String((v.params as { missingProperty?: string }).missingProperty)}` : '';
    return { path: `${where}${v.instancePath}${missing}`, message: v.message ?? 'is invalid' };
  });
}

function toEnvelope(err: FastifyError | AppError | Error, request: FastifyRequest): { status: number; body: ErrorEnvelope } {
  if (err instanceof AppError) return { status: err.status, body: envelope(err.code, err.message, err.details) };
  const fe = err as FastifyError;
  if (fe.validation) {
    const fields = validationFields(fe);
    const summary = fields.map((f) => `${f.path} ${f.message}`).join('; ');
    return { status: 400, body: envelope('BAD_REQUEST', `invalid request: ${summary}`, { fields }) };
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { status, body: envelope(CODE_BY_STATUS.get(status) ?? 'BAD_REQUEST', fe.message, null) };
  }
  return { status: status >= 500 && status < 600 ? status : 500, body: envelope(CODE_BY_STATUS.get(status) ?? 'INTERNAL', 'internal error', { request_id: request.id }) };
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toEnvelope(err, request);
    if (status >= 500) request.log.error({ err, reqId: request.id }, 'request failed');
    else request.log.info({ reqId: request.id, code: body.error.code, status }, body.error.message);
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply.status(404).send(envelope('NOT_FOUND', `Route ${request.method} ${path} not found`));
  });
}
