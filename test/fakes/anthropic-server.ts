// A fake Anthropic Messages API on loopback speaking the real wire format: POST /v1/messages with
// `stream: true` answers named SSE events (message_start, content_block_start, ping,
// content_block_delta with text_delta / input_json_delta, content_block_stop, message_delta,
// message_stop, and `error` inside a stream); GET /v1/models; errors in Anthropic's envelope
// {type: "error", error: {type, message}}, including 529 overloaded_error.
import type { ServerResponse } from 'node:http';
import { sendJson, startFake, startSse, type FakeReply, type FakeServer, type RecordedRequest } from './openai-server';

const err = (status: number, type: string, message: string, headers?: Record<string, string>): FakeReply => ({
  kind: 'error',
  status,
  body: { type: 'error', error: { type, message } },
  ...(headers ? { headers } : {}),
});

/** Canned Anthropic error answers with the real bodies. */
export const anthropicErrors = {
  rateLimit: (retryAfterS?: number): FakeReply =>
    err(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', retryAfterS !== undefined ? { 'retry-after': String(retryAfterS) } : undefined),
  auth: (): FakeReply => err(401, 'authentication_error', 'invalid x-api-key'),
  billing: (): FakeReply => err(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.'),
  lowCredit400: (): FakeReply => err(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'),
  overloaded: (): FakeReply => err(529, 'overloaded_error', 'Overloaded'),
  server: (status = 500): FakeReply => err(status, 'api_error', 'Internal server error'),
  contextLength: (): FakeReply => err(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
  badRequest: (): FakeReply => err(400, 'invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'),
};

export async function startAnthropicServer(): Promise<FakeServer> {
  const holder: { fake?: FakeServer } = {};
  const fake: FakeServer = await startFake((req, res, next) => {
    if (req.method === 'GET' && req.path === '/v1/models') {
      // Scripted errors apply here too, so a refused key is refused on the model list as well.
      const r = next();
      if (r.kind === 'error') {
        sendJson(res, r.status, r.body, r.headers);
        return;
      }
      const data = holder.fake!.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }));
      sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      return;
    }
    if (req.method === 'POST' && req.path === '/v1/messages') {
      messages(req, res, next());
      return;
    }
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `Not found: ${req.path}` } });
  }, '');
  holder.fake = fake;
  fake.models = ['claude-fake-haiku', 'claude-fake-sonnet'];
  return fake;
}

function messages(req: RecordedRequest, res: ServerResponse, reply: FakeReply): void {
  if (reply.kind === 'error') {
    sendJson(res, reply.status, reply.body, { 'request-id': 'req_fake', ...reply.headers });
    return;
  }
  const send = (event: string, data: Record<string, unknown>): boolean => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const model = (reply.kind === 'text' && reply.model) || (typeof req.body?.model === 'string' ? req.body.model : 'claude-fake');
  startSse(res);
  if (reply.kind === 'stall' && !reply.chunks?.length) return; // headers, then nothing
  send('message_start', {
    message: { id: 'msg_fake', type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
  });
  const texts = reply.kind === 'tool_calls' ? (reply.text ?? []) : (reply.chunks ?? []);
  let index = 0;
  if (texts.length > 0 || reply.kind === 'text') {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    send('ping', {});
    for (const t of texts) send('content_block_delta', { index, delta: { type: 'text_delta', text: t } });
    if (reply.kind === 'stall') return;
    if (reply.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (reply.kind === 'stream_error') {
      send('error', { error: { type: reply.error.type, message: reply.error.message } });
      res.end();
      return;
    }
    send('content_block_stop', { index });
    index++;
  }
  if (reply.kind === 'tool_calls') {
    for (const c of reply.calls) {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const piece of c.argumentChunks) send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      send('content_block_stop', { index });
      index++;
    }
  }
  const stop = reply.kind === 'tool_calls' ? 'tool_use' : reply.kind === 'text' && reply.finish === 'length' ? 'max_tokens' : 'end_turn';
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: texts.length + 1 } });
  send('message_stop', {});
  res.end();
}
