// chat_request from a phone peer on /v1/node (node-protocol.md "Phone as peer"): one agent turn in the
// named session through the conversation port, answered with chat_response. The conversation port
// gives the answer whole, so `reply_mode: stream` gets the same single final frame
// (docs/node-protocol.md "chat_request").
import type { Logger } from 'pino';
import type { ConversationPort } from '../../kernel/capability';
import type { ChatRequest } from '../../../protocol/node';

export async function answerChat(
  conversations: ConversationPort,
  logger: Logger,
  signal: AbortSignal,
  nodeId: string,
  request: ChatRequest,
  reply: (text: string, final: boolean) => void,
): Promise<void> {
  try {
    const answer = await conversations.prompt({ sessionId: request.session_id, text: request.text, tools: true, signal });
    reply(answer.text, true);
  } catch (err) {
    if (signal.aborted) return;
    logger.error({ err, node_id: nodeId, session_id: request.session_id }, 'chat_request failed');
    reply('the brain could not answer this message; see its log', true);
  }
}
