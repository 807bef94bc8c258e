// An MCP CallToolResult as a ToolOutcome: text blocks make the summary, binary blocks are described by
// size, structured content is kept, isError is a ToolFailure with the server's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remoteOutcome } from '../../../daemon/mcp/remote-result';
import { ToolFailure } from '../../../daemon/kernel/tool';

void test('text, images and structured content', () => {
  const out = remoteOutcome('s', 't', { content: [{ type: 'text', text: 'line 1' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }, { type: 'text', text: 'line 2' }], structuredContent: { temp: 21 } });
  assert.equal(out.summary, 'line 1\nline 2');
  assert.deepEqual(out.data, { content: [{ type: 'text', text: 'line 1' }, { type: 'image', mimeType: 'image/png', bytes: 3 }, { type: 'text', text: 'line 2' }], structured: { temp: 21 } });
});

void test('no text: the structured content or the block types; a long text is cut', () => {
  assert.equal(remoteOutcome('s', 't', { content: [], structuredContent: { a: 1 } }).summary, '{"a":1}');
  assert.equal(remoteOutcome('s', 't', { content: [{ type: 'image', data: '', mimeType: 'image/png' }] }).summary, '[image]');
  assert.equal(remoteOutcome('s', 't', { content: [] }).summary, '(no content)');
  assert.ok(remoteOutcome('s', 't', { content: [{ type: 'text', text: 'x'.repeat(5000) }] }).summary.length <= 2001);
});

void test('isError is the tool failing with its text', () => {
  assert.throws(() => remoteOutcome('fs', 'read_file', { content: [{ type: 'text', text: 'ENOENT: no such file' }], isError: true }), (err: Error) => err instanceof ToolFailure && err.message === 'read_file (MCP server fs) failed: ENOENT: no such file');
});
