// One error handler and one not-found handler (STYLE.md 9): every error leaves as the spec 7
// envelope {error: {code, message, details}} — including the framework's own refusals (bad URL
// encoding, an over-long path parameter) and the server's answers to malformed requests, header
// overflow and timeouts. 5xx are logged at error with the request id and never leak a stack or an
// internal message; 4xx are logged compactly and rate-limited (client-error-log.ts).
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, UNVERIFIED_MANIFEST, type ErrorCode, type ErrorEnvelope, type FieldError } from '../../protocol/errors';
import { AppError, UnverifiedManifestError } from '../kernel/errors';
import type { ClientErrorLog } from './client-error-log';
import { maxParamLength } from './request-parsing';

// The generic code for a status is the first one listed for it in the catalogue (503 → UNAVAILABLE, not VAULT_LOCKED).
const CODE_BY_STATUS = new Map<number, ErrorCode>();
for (const [code, status] of Object.entries(ERROR_CODES)) if (!CODE_BY_STATUS.has(status)) CODE_BY_STATUS.set(status, code as ErrorCode);

/** A body with thousands of bad fields is answered (and logged) with the first few. */
const FIELD_LIMIT = 20;

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
    const all = validationFields(fe);
    const fields = all.slice(0, FIELD_LIMIT);
    const more = all.length - fields.length;
    const summary = fields.map((f) => `${f.path} ${f.message}`).join('; ') + (more > 0 ? `; and ${more} more` : '');
    return { status: 400, body: envelope('BAD_REQUEST', `invalid request: ${summary}`, { fields }) };
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { status, body: envelope(CODE_BY_STATUS.get(status) ?? 'BAD_REQUEST', fe.message, null) };
  }
  return { status: status >= 500 && status < 600 ? status : 500, body: envelope(CODE_BY_STATUS.get(status) ?? 'INTERNAL', 'internal error', { request_id: request.id }) };
}

/**
 * Refusals the framework makes before routing (fastify `frameworkErrors`). They run before the
 * onRequest hook, so `authenticate` decides first: a caller without the token learns nothing more
 * from a malformed URL than from a well-formed one.
 */
export function frameworkErrors(authenticate: (request: FastifyRequest) => AppError | undefined, log: ClientErrorLog): (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (err, request, reply) => {
    const refusal =
      authenticate(request) ??
      (err.code === 'FST_ERR_BAD_URL'
        ? new AppError('BAD_REQUEST', 'the URL has a malformed percent-encoding', null)
        : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError('BAD_REQUEST', `a path parameter is longer than ${maxParamLength} characters`, { max_length: maxParamLength })
          : undefined);
    if (!refusal) {
      request.log.error({ err, reqId: request.id }, 'request failed before routing');
      void reply.status(500).header('connection', 'close').send(envelope('INTERNAL', 'internal error', { request_id: request.id }));
      return;
    }
    log.record({ status: refusal.status, code: refusal.code, message: refusal.message, reqId: request.id, method: request.method, route: 'unmatched' });
    void reply.status(refusal.status).header('connection', 'close').send(envelope(refusal.code, refusal.message, refusal.details));
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The server's answer to a request it could not parse or that took too long (node `clientError`). */
export function clientErrorHandler(log: ClientErrorLog): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, message] =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ([408, 'REQUEST_TIMEOUT', 'the request did not arrive in time'] as const)
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? ([431, 'HEADERS_TOO_LARGE', 'the request headers are too large'] as const)
          : ([400, 'BAD_REQUEST', 'malformed HTTP request'] as const);
    log.record({ status, code, message: `${message} (${err.code ?? 'unknown'})` });
    if (socket.writable) {
      const body = JSON.stringify(envelope(code, message, null));
      socket.write(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}

export function installErrorHandlers(app: FastifyInstance, log: ClientErrorLog): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) => {
    // Spec 7: a manifest verification failure has its own body, {error: "UnverifiedManifest", reason}.
    if (err instanceof UnverifiedManifestError) {
      log.record({ status: 422, code: UNVERIFIED_MANIFEST, message: `${err.reason}: ${err.message}`, reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched' });
      return reply.status(422).send({ error: UNVERIFIED_MANIFEST, reason: err.reason, message: err.message });
    }
    const { status, body } = toEnvelope(err, request);
    if (status >= 500) request.log.error({ err, reqId: request.id }, 'request failed');
    else log.record({ status, code: body.error.code, message: body.error.message, reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched' });
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply.status(404).send(envelope('NOT_FOUND', `Route ${request.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path} not found`));
  });
}

