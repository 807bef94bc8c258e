// A fake OpenAI-compatible server on loopback (node:http) speaking the real wire format: POST
// /v1/chat/completions with `stream: true` answers text/event-stream chunks (`data: {...}\n\n`, then
// `data: [DONE]`), tool calls as streamed tool_calls deltas, usage in a last chunk when
// stream_options.include_usage is set; GET /v1/models; errors in OpenAI's JSON error envelope.
// Tests script each answer with reply(); every request is recorded. Also the shared HTTP plumbing
// of test/fakes/anthropic-server.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The key the client sent (Authorization: Bearer … or x-api-key), null when none. */
  apiKey: string | null;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

export type FakeReply =
  | { kind: 'text'; chunks: string[]; finish?: 'stop' | 'length'; model?: string }
  | { kind: 'tool_calls'; text?: string[]; calls: { id: string; name: string; argumentChunks: string[] }[] }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  /** Headers (and these chunks) are sent, then nothing, ever: the client must time out. */
  | { kind: 'stall'; chunks?: string[] }
  /** Some text, then an error event inside the stream. */
  | { kind: 'stream_error'; chunks: string[]; error: { type: string; message: string; code?: string } }
  /** Chunks, then the socket is destroyed. */
  | { kind: 'drop'; chunks?: string[] };

export type Responder = (req: RecordedRequest) => FakeReply;

export interface FakeServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** What to give the SDK as base URL (OpenAI: url + /v1; Anthropic: url). */
  baseURL: string;
  requests: RecordedRequest[];
  models: string[];
  /** Sets how every following request is answered (default: text "Hello from fake"). */
  reply(responder: Responder): void;
  /** Answers the next n requests from this list, in order, then falls back to the responder. */
  queue(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

export const textReply = (...chunks: string[]): FakeReply => ({ kind: 'text', chunks });

/** Canned OpenAI error answers with the real bodies. */
export const openAiErrors = {
  rateLimit: (retryAfterS?: number): FakeReply => ({
    kind: 'error',
    status: 429,
    body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    ...(retryAfterS !== undefined ? { headers: { 'retry-after': String(retryAfterS) } } : {}),
  }),
  auth: (): FakeReply => ({ kind: 'error', status: 401, body: { error: { message: 'Incorrect API key provided: sk-abc***wxyz.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }),
  billing: (): FakeReply => ({ kind: 'error', status: 429, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } }),
  paymentRequired: (): FakeReply => ({ kind: 'error', status: 402, body: { error: { message: 'Payment required', type: 'billing_error', param: null, code: null } } }),
  overloaded: (): FakeReply => ({ kind: 'error', status: 503, body: { error: { message: 'The engine is currently overloaded, please try again later', type: 'server_error', param: null, code: null } } }),
  server: (status = 500): FakeReply => ({ kind: 'error', status, body: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } }),
  contextLength: (): FakeReply => ({
    kind: 'error',
    status: 400,
    body: { error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
  }),
  badRequest: (): FakeReply => ({ kind: 'error', status: 400, body: { error: { message: "Invalid type for 'messages[0].content'", type: 'invalid_request_error', param: 'messages', code: null } } }),
};

/** Shared plumbing: records, parses JSON bodies, routes, and tracks sockets so close() never hangs. */
export async function startFake(
  route: (req: RecordedRequest, res: ServerResponse, reply: () => FakeReply) => void,
  baseSuffix: string,
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const queued: FakeReply[] = [];
  let responder: Responder = () => textReply('Hello', ' from', ' fake');
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const auth = req.headers.authorization;
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0]!,
        apiKey: auth?.startsWith('Bearer ') ? auth.slice(7) : ((req.headers['x-api-key'] as string | undefined) ?? null),
        headers: req.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
      };
      requests.push(recorded);
      route(recorded, res, () => queued.shift() ?? responder(recorded));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeServer = {
    url,
    baseURL: `${url}${baseSuffix}`,
    requests,
    models: [],
    reply: (r) => (responder = r),
    queue: (...r) => queued.push(...r),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

export async function startOpenAiServer(): Promise<FakeServer> {
  const holder: { fake?: FakeServer } = {};
  const fake: FakeServer = await startFake((req, res, next) => {
    if (req.method === 'GET' && req.path === '/v1/models') {
      // Scripted errors apply here too, so a refused key is refused on the model list as well.
      const r = next();
      if (r.kind === 'error') sendJson(res, r.status, r.body, r.headers);
      else sendJson(res, 200, { object: 'list', data: holder.fake!.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) });
      return;
    }
    if (req.method === 'POST' && req.path === '/v1/chat/completions') {
      chatCompletion(req, res, next());
      return;
    }
    sendJson(res, 404, { error: { message: `Unknown request URL: ${req.method} ${req.path}`, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
  }, '/v1');
  holder.fake = fake;
  fake.models = ['gpt-fake-mini', 'gpt-fake'];
  return fake;
}

function chatCompletion(req: RecordedRequest, res: ServerResponse, reply: FakeReply): void {
  if (reply.kind === 'error') {
    sendJson(res, reply.status, reply.body, reply.headers);
    return;
  }
  const model = (reply.kind === 'text' && reply.model) || (typeof req.body?.model === 'string' ? req.body.model : 'gpt-fake');
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
  startSse(res);
  if (reply.kind === 'stall' && !reply.chunks?.length) return; // headers, then nothing
  res.write(chunk({ role: 'assistant', content: '' }));
  const texts = reply.kind === 'tool_calls' ? (reply.text ?? []) : (reply.chunks ?? []);
  for (const t of texts) res.write(chunk({ content: t }));
  if (reply.kind === 'stall') return;
  if (reply.kind === 'drop') {
    res.socket?.destroy();
    return;
  }
  if (reply.kind === 'stream_error') {
    res.write(`data: ${JSON.stringify({ error: reply.error })}\n\n`);
    res.end();
    return;
  }
  let finish: string = reply.kind === 'text' ? (reply.finish ?? 'stop') : 'tool_calls';
  if (reply.kind === 'tool_calls') {
    reply.calls.forEach((c, index) => {
      res.write(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
      for (const piece of c.argumentChunks) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    finish = 'tool_calls';
  }
  res.write(chunk({}, finish));
  const streamOptions = req.body?.stream_options as { include_usage?: boolean } | undefined;
  if (streamOptions?.include_usage) {
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: 12, completion_tokens: texts.length, total_tokens: 12 + texts.length } })}\n\n`);
  }
  res.write('data: [DONE]\n\n');
  res.end();
}
