// sync/triple-id.ts: the same fact has the same id on every brain, and it is the id the knowledge graph
// stores (daemon/memory/knowledge-graph.ts), so a synced fact lands on the local record of that fact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { entityKey as graphEntityKey, tripleId as graphTripleId } from '../../daemon/memory/knowledge-graph';
import { entityKey, tripleId } from '../../sync/triple-id';

const part = fc.string({ unit: 'grapheme', maxLength: 40 });

void test('property: the sync id of a fact is the knowledge graph\'s id of it', () => {
  fc.assert(
    fc.property(part, part, part, (s, p, o) => {
      assert.equal(tripleId(s, p, o), graphTripleId(s, p, o));
      assert.equal(entityKey(s), graphEntityKey(s));
    }),
  );
});

void test('case, Unicode form and spacing do not make another fact; another part does', () => {
  const id = tripleId('Alice', 'lives in', 'Lisbon');
  assert.match(id, /^kg_[0-9a-f]{24}$/);
  assert.equal(tripleId(' ALICE ', 'lives\u00a0 in', 'lisbon'), id);
  assert.equal(tripleId('Ａｌｉｃｅ', 'lives in', 'Lisbon'), id, 'NFKC: full-width letters are the same letters');
  assert.notEqual(tripleId('Alice', 'lives in', 'Porto'), id);
  assert.notEqual(tripleId('Alice lives', 'in', 'Lisbon'), id, 'the parts are kept apart');
});
