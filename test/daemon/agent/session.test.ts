// Session accounting (daemon/agent/session.ts) as a fast-check model: whatever mix of turns,
// restores and budget compactions, the bytes a session reports are the bytes of what it holds, its
// transcript stays within its cap, and every entry that leaves RAM goes through the compaction sink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Session, type ConversationEntry } from '../../../daemon/agent/session';

const CAP = 2048;
const limits = { maxEntries: 6, maxQueuedTurns: 4, transcriptBytes: CAP, working: { maxItems: 8, maxBytes: 512 } };
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ minLength: 200, maxLength: 900, size: 'max' }), fc.string({ unit: 'grapheme', maxLength: 300 }));

const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('record' as const), role: fc.constantFrom('user' as const, 'assistant' as const), text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), texts: fc.array(text, { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), target: fc.integer({ min: 0, max: 3000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('working' as const), key: fc.constantFrom('a', 'b', 'c'), value: fc.string({ maxLength: 200 }) }) },
);

const held = (s: Session): number => {
  const entries = new Set<ConversationEntry>([...s.transcript, ...s.conversation]);
  let n = s.working.bytes;
  for (const e of entries) n += Buffer.byteLength(e.message.content);
  return n;
};

void test('a session counts exactly what it holds, keeps its transcript within its cap, and sheds only through the sink', () => {
  fc.assert(
    fc.property(fc.array(op, { minLength: 10, maxLength: 80, size: 'max' }), (ops) => {
      const shed: ConversationEntry[] = [];
      const recorded: ConversationEntry[] = [];
      const s = new Session('ses_t', 0, limits, undefined, (_s, entries) => shed.push(...entries));
      let at = 0;
      for (const o of ops) {
        if (o.kind === 'record') {
          const entry: ConversationEntry = { message: { role: o.role, content: o.text }, turnId: `t${at}`, at: ++at };
          recorded.push(entry);
          s.record(entry);
          const text = s.bytes - s.working.bytes;
          assert.ok(text <= CAP || s.transcript.length === 1, `transcript ${text} bytes in ${s.transcript.length} entries`);
          assert.equal(s.conversation.at(-1), entry, 'the newest entry is always kept');
        } else if (o.kind === 'restore') {
          s.restore(o.texts.map((content) => ({ role: 'user', content })), s.working.entries(), ++at);
        } else if (o.kind === 'compact') {
          s.compact(o.target);
          assert.ok(s.bytes <= o.target, `compacted to ${s.bytes}, asked ${o.target}`);
        } else {
          s.working.set(o.key, o.value);
        }
        assert.equal(s.bytes, held(s));
        assert.ok(s.conversation.length <= limits.maxEntries || o.kind === 'restore');
        assert.deepEqual([...shed, ...s.transcript], recorded, 'every recorded entry is held or was handed to the sink, in order');
        const inTranscript = s.conversation.filter((e) => s.transcript.includes(e));
        assert.deepEqual(inTranscript, s.transcript.slice(s.transcript.length - inTranscript.length), 'the conversation ends with the newest transcript entries');
      }
      s.release();
      assert.equal(s.bytes, 0);
    }),
    { numRuns: 200, endOnFailure: true },
  );
});
