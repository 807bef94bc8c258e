// protocol/audit.ts: an audit entry has exactly its six fields (details any JSON); the query takes a
// lower snake case tag and a limit of 1 to 500, nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { AuditEntry, AuditList, AuditQuery, AUDIT_TAG_PATTERN } from '../../protocol/audit';

const entry = { id: 1, at: 1_700_000_000.5, tag: 'unsigned_install', actor: 'admin', subject: 'skill:x@1.0.0', details: { source: '/tmp/x' } };

void test('an entry has exactly its fields; details may be any JSON, null included', () => {
  assert.ok(Value.Check(AuditEntry, entry));
  assert.ok(Value.Check(AuditEntry, { ...entry, details: null }));
  assert.ok(Value.Check(AuditList, { entries: [entry] }));
  assert.ok(!Value.Check(AuditEntry, { ...entry, extra: 1 }));
  assert.ok(!Value.Check(AuditEntry, { ...entry, id: 1.5 }));
  const { actor: _actor, ...noActor } = entry;
  assert.ok(!Value.Check(AuditEntry, noActor));
});

void test('the query: a lower snake case tag, a limit of 1 to 500, nothing else', () => {
  for (const ok of [{}, { tag: 'unsigned_install' }, { limit: 1 }, { limit: 500, tag: 'a' }]) assert.ok(Value.Check(AuditQuery, ok), JSON.stringify(ok));
  for (const bad of [{ limit: 0 }, { limit: 501 }, { limit: 2.5 }, { tag: 'Unsigned' }, { tag: '1abc' }, { tag: 'a-b' }, { tag: '' }, { tag: `a${'b'.repeat(64)}` }, { since: 1 }]) {
    assert.ok(!Value.Check(AuditQuery, bad), JSON.stringify(bad));
  }
  assert.match('unsigned_install', new RegExp(AUDIT_TAG_PATTERN));
});
