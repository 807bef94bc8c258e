// protocol/skills.ts: the skill manifest accepts a well-formed manifest with each trigger kind, and
// refuses an id that is not lower kebab case, a version that is not semver, an entry with a folder or
// not ending in .js, a schedule with both or neither of cron and every_seconds, and unknown properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { SkillManifest } from '../../protocol/skills';
import { goodManifest } from '../skills/skill-fixtures';

test('a well-formed manifest with every trigger kind is accepted', () => {
  assert.ok(Value.Check(SkillManifest, goodManifest), JSON.stringify([...Value.Errors(SkillManifest, goodManifest)].slice(0, 3)));
});

test('bad ids, versions, entries, triggers and extra properties are refused', () => {
  const bad: Record<string, unknown>[] = [
    { id: 'Unit_Convert' }, { id: '-x' }, { version: '1.2' }, { version: 'v1.0.0' }, { entry: '../main.js' }, { entry: 'lib/main.js' },
    { entry: '.hidden.js' }, { entry: 'impl.py' }, { triggers: [] }, { triggers: [{ type: 'schedule' }] },
    { triggers: [{ type: 'schedule', cron: '0 7 * * *', every_seconds: 5 }] }, { triggers: [{ type: 'webhook' }] },
    { params: { type: 'string' } }, { extra: 1 }, { permissions: { network: { allow: ['a b'] }, tools: [] } }, { permissions: { tools: [] } },
  ];
  for (const change of bad) assert.ok(!Value.Check(SkillManifest, { ...goodManifest, ...change }), JSON.stringify(change));
});
