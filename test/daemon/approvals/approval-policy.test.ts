// daemon/approvals/approval-policy.ts: the defaults (passive and active auto, privileged and dangerous
// ask), a tool's own policy over its level's, and the settings section's validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { ApprovalSettings, policyFor, type Policy } from '../../../daemon/approvals/approval-policy';
import type { SafetyLevel } from '../../../daemon/kernel/tool';

const LEVELS: SafetyLevel[] = ['passive', 'active', 'privileged', 'dangerous'];
const POLICIES: Policy[] = ['auto', 'ask', 'deny'];
const defaults = (): ApprovalSettings => Value.Default(ApprovalSettings, {}) as ApprovalSettings;

void test('defaults: passive and active run, privileged and dangerous ask; a day of TTL', () => {
  const settings = defaults();
  assert.deepEqual(
    LEVELS.map((level) => policyFor(settings, 'any', level)),
    ['auto', 'auto', 'ask', 'ask'],
  );
  assert.equal(settings.ttl_minutes, 1440);
  assert.deepEqual(settings.tools, {});
});

void test('property: a tool with its own policy gets it whatever its level; any other tool gets its level', () => {
  const name = fc.stringMatching(/^[a-z_]{1,12}$/);
  fc.assert(
    fc.property(
      fc.record({ passive: fc.constantFrom(...POLICIES), active: fc.constantFrom(...POLICIES), privileged: fc.constantFrom(...POLICIES), dangerous: fc.constantFrom(...POLICIES) }),
      fc.dictionary(name, fc.constantFrom(...POLICIES)),
      name,
      fc.constantFrom(...LEVELS),
      (policies, tools, tool, level) => {
        const settings = { policies, tools };
        const expected = Object.hasOwn(tools, tool) ? tools[tool] : policies[level];
        assert.equal(policyFor(settings, tool, level), expected);
      },
    ),
  );
});

void test('a name that is also an Object property (constructor, toString) is not a tool override', () => {
  assert.equal(policyFor(defaults(), 'constructor', 'privileged'), 'ask');
  assert.equal(policyFor(defaults(), 'toString', 'passive'), 'auto');
});

void test('the section refuses an unknown policy, an unknown level and a TTL of zero', () => {
  assert.equal(Value.Check(ApprovalSettings, { ...defaults(), policies: { ...defaults().policies, privileged: 'maybe' } }), false);
  assert.equal(Value.Check(ApprovalSettings, { ...defaults(), policies: { ...defaults().policies, root: 'ask' } }), false);
  assert.equal(Value.Check(ApprovalSettings, { ...defaults(), tools: { identity: 'sometimes' } }), false);
  assert.equal(Value.Check(ApprovalSettings, { ...defaults(), ttl_minutes: 0 }), false);
  assert.equal(Value.Check(ApprovalSettings, { ...defaults(), tools: { identity: 'deny' } }), true);
});
