// An external MCP tool's result as the brain's ToolOutcome: the text blocks make the summary the model
// and people read; every block (binary ones by type and size, never their bytes) and the structured
// content go in `data`. A result with isError is the tool's failure (ToolFailure), which the tool
// runner gives the model as an error.
import { ToolFailure, type ToolOutcome } from '../kernel/tool';

/** The fields of an MCP CallToolResult the brain reads (the SDK's type is wider). */
export interface RemoteResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Older servers answer `toolResult` instead of content. */
  toolResult?: unknown;
}

const MAX_SUMMARY = 2000;

type Block = Record<string, unknown> & { type?: unknown };

const isBlock = (v: unknown): v is Block => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A content block for `data`: text as it is, binary data replaced by its size. */
function blockData(block: Block): unknown {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, mimeType: block.mimeType, bytes: typeof block.data === 'string' ? Math.floor((block.data.length * 3) / 4) : 0 };
    case 'resource': {
      const r = isBlock(block.resource) ? block.resource : {};
      return { type: 'resource', uri: r.uri, mimeType: r.mimeType, ...(typeof r.text === 'string' ? { text: r.text } : { bytes: typeof r.blob === 'string' ? Math.floor((r.blob.length * 3) / 4) : 0 }) };
    }
    case 'resource_link':
      return { type: 'resource_link', uri: block.uri, name: block.name };
    default:
      return { type: String(block.type) };
  }
}

function summaryOf(blocks: Block[], structured: unknown): string {
  const texts = blocks.filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  const text = texts.join('\n').trim() || (structured === undefined ? blocks.map((b) => `[${String(b.type)}]`).join(' ') : JSON.stringify(structured));
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY)}…` : text || '(no content)';
}

export function remoteOutcome(server: string, remote: string, result: RemoteResult): ToolOutcome {
  const blocks = (result.content ?? []).filter(isBlock);
  const summary = summaryOf(blocks, result.structuredContent ?? result.toolResult);
  if (result.isError === true) throw new ToolFailure(`${remote} (MCP server ${server}) failed: ${summary}`);
  const data: Record<string, unknown> = { content: blocks.map(blockData) };
  if (result.structuredContent !== undefined) data.structured = result.structuredContent;
  if (result.toolResult !== undefined) data.result = result.toolResult;
  return { summary, data };
}
