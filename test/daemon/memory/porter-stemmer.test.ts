import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { porterStem } from '../../../daemon/memory/porter-stemmer';
import { words } from '../../../daemon/kernel/text';

/** SQLite's own answer: the terms FTS5 (porter unicode61 remove_diacritics 2) indexes for each text. */
function sqliteTerms(texts: readonly string[]): string[][] {
  const dir = mkdtempSync(join(tmpdir(), 'svc-porter-'));
  const store = new SqliteStore(join(dir, 'p.db'), { groupCommit: false });
  try {
    store.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    store.transaction((db) => texts.forEach((x, i) => db.run('INSERT INTO t(rowid, x) VALUES (?, ?)', [i + 1, x])));
    const rows = store.all<{ term: string; doc: number; offset: number }>('SELECT term, doc, offset FROM v');
    const out: string[][] = texts.map(() => []);
    for (const r of rows.sort((a, b) => a.doc - b.doc || a.offset - b.offset)) out[r.doc - 1]!.push(r.term);
    return out;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const KNOWN = ['caresses', 'ponies', 'caress', 'cats', 'feed', 'agreed', 'plastered', 'motoring', 'sing', 'conflated', 'troubled', 'sized', 'hopping', 'tanned', 'falling', 'hissing', 'fizzed', 'failing', 'filing', 'happy', 'sky', 'relational', 'conditional', 'rational', 'valenci', 'digitizer', 'conformabli', 'radicalli', 'differentli', 'vileli', 'analogousli', 'vietnamization', 'predication', 'operator', 'feudalism', 'decisiveness', 'hopefulness', 'callousness', 'formaliti', 'sensitiviti', 'sensibiliti', 'triplicate', 'formative', 'formalize', 'electriciti', 'electrical', 'hopeful', 'goodness', 'revival', 'allowance', 'inference', 'airliner', 'gyroscopic', 'adjustable', 'defensible', 'irritant', 'replacement', 'adjustment', 'dependent', 'adoption', 'homologou', 'communism', 'activate', 'angulariti', 'homologous', 'effective', 'bowdlerize', 'probate', 'rate', 'cease', 'controll', 'roll', 'running', 'meetings', 'dentist', 'appointments', 'generalizations', 'oscillators', 'archaeology', 'ying', 'yyy', 'bye', 'ies', 'sses', 'yyed', 'eyyed', 'yyying', 'abc123', 'x9ing', 'naïve', 'café', 'straße'];

void test('porterStem agrees with FTS5 porter on a classic word list', () => {
  const expected = sqliteTerms(KNOWN);
  const mine = KNOWN.map((w) => words(w).map(porterStem));
  assert.deepEqual(mine, expected);
});

void test('porterStem agrees with FTS5 porter on generated words and sentences (fast-check)', () => {
  const letters = fc.constantFrom(...'abcdeefghiijklmnoopqrssttuuvwxyyz'.split(''));
  const suffix = fc.constantFrom('', 's', 'es', 'ies', 'ed', 'ing', 'ation', 'ational', 'izer', 'fulness', 'iviti', 'ement', 'ness', 'ly', 'e', 'll', 'ize', 'ible', 'ion', 'sion', 'tion', 'ous', 'y', 'logi', 'bli', 'eed');
  const word = fc.tuple(fc.array(letters, { minLength: 1, maxLength: 9 }), suffix).map(([l, s]) => l.join('') + s);
  const sentence = fc.array(fc.oneof(word, fc.constantFrom('3rd', 'x2y', 'Ünïcödé', 'ÉTÉ', '42', 'straße', 'ßßing', 'ßy', 'añoyed', 'ab', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaing', 'ééééééééééééééééééééééééééééééééing')), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));
  fc.assert(
    fc.property(fc.array(sentence, { minLength: 1, maxLength: 40 }), (texts) => {
      assert.deepEqual(texts.map((t) => words(t).map(porterStem)), sqliteTerms(texts));
    }),
    { numRuns: 200 },
  );
});
