// answerChat: a phone's chat_request becomes one turn through the conversation port, answered with
// one final chat_response; a failed turn is logged and answered; a stopped brain answers nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { answerChat } from '../../../../daemon/hardware/links/node-chat';
import type { ConversationPort } from '../../../../daemon/kernel/capability';

function port(prompt: ConversationPort['prompt']): ConversationPort {
  return { prompt, tell: () => false };
}

const silent = pino({ level: 'silent' });

void test('the turn runs in the named session, with tools, and its text is the one final reply', async () => {
  const asked: Parameters<ConversationPort['prompt']>[0][] = [];
  const replies: [string, boolean][] = [];
  const conversations = port(async (request) => {
    asked.push(request);
    return { text: 'the lamp is on', finishReason: 'stop', sessionId: request.sessionId };
  });
  await answerChat(conversations, silent, new AbortController().signal, 'phone', { session_id: 'ses_1', text: 'is the lamp on?', reply_mode: 'stream' }, (text, final) => replies.push([text, final]));
  assert.deepEqual(replies, [['the lamp is on', true]]);
  assert.equal(asked[0]?.sessionId, 'ses_1');
  assert.equal(asked[0]?.text, 'is the lamp on?');
  assert.equal(asked[0]?.tools, true);
});

void test('a failed turn is answered with a final message; after an abort nothing is sent', async () => {
  const replies: [string, boolean][] = [];
  const failing = port(() => Promise.reject(new Error('provider down')));
  await answerChat(failing, silent, new AbortController().signal, 'phone', { session_id: 's', text: 'hi' }, (text, final) => replies.push([text, final]));
  assert.equal(replies.length, 1);
  assert.equal(replies[0]?.[1], true);
  assert.match(replies[0]?.[0] ?? '', /could not answer/);
  const stopped = new AbortController();
  stopped.abort();
  const none: string[] = [];
  await answerChat(failing, silent, stopped.signal, 'phone', { session_id: 's', text: 'hi' }, (text) => none.push(text));
  assert.deepEqual(none, []);
});
