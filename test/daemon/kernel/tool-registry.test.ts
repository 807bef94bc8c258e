// The tool registry against a model: whatever the sequence of registrations, removals and removals by
// owner, it holds exactly the tools the model holds, each under its owner, and its listeners hear every
// change once, in order. Plus names, argument checking and a specialist's subset of specs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Kind, Type, type TSchema } from '@sinclair/typebox';
import { ToolRegistry, type ToolChange } from '../../../daemon/kernel/tool-registry';
import { defineTool, type Tool } from '../../../daemon/kernel/tool';

const tool = (name: string): Tool =>
  defineTool({
    spec: { name, description: `the ${name} tool`, parameters: Type.Object({ query: Type.String({ minLength: 1 }), limit: Type.Optional(Type.Integer({ minimum: 1 })) }) },
    safety: 'passive',
    run: () => Promise.resolve({ summary: name }),
  });

type Op = { op: 'register'; owner: string; name: string } | { op: 'unregister'; name: string } | { op: 'removeOwner'; owner: string };

const owners = fc.constantFrom('memory', 'identity', 'devices');
const names = fc.constantFrom('remember', 'recall', 'forget', 'set_device', 'who_am_i');
const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('register' as const), owner: owners, name: names }),
    fc.record({ op: fc.constant('unregister' as const), name: names }),
    fc.record({ op: fc.constant('removeOwner' as const), owner: owners }),
  ),
  { maxLength: 40 },
);

void test('property: the registry holds what a model holds, and listeners hear every change in order', () => {
  fc.assert(
    fc.property(ops, (sequence: Op[]) => {
      const registry = new ToolRegistry();
      const heard: ToolChange[] = [];
      registry.onChange((c) => heard.push(c));
      const model = new Map<string, string>();
      const expected: ToolChange[] = [];
      for (const step of sequence) {
        if (step.op === 'register') {
          const holder = model.get(step.name);
          if (holder !== undefined) {
            assert.throws(() => registry.register(step.owner, tool(step.name)), new RegExp(`already registered by ${holder}`));
          } else {
            registry.register(step.owner, tool(step.name));
            model.set(step.name, step.owner);
            expected.push({ kind: 'added', owner: step.owner, name: step.name });
          }
        } else if (step.op === 'unregister') {
          const holder = model.get(step.name);
          assert.equal(registry.unregister(step.name), holder !== undefined);
          if (holder !== undefined) {
            model.delete(step.name);
            expected.push({ kind: 'removed', owner: holder, name: step.name });
          }
        } else {
          const gone = [...model].filter(([, owner]) => owner === step.owner).map(([name]) => name);
          assert.deepEqual(registry.removeOwner(step.owner), gone);
          for (const name of gone) {
            model.delete(name);
            expected.push({ kind: 'removed', owner: step.owner, name });
          }
        }
      }
      assert.deepEqual(registry.names(), [...model.keys()]);
      for (const [name, owner] of model) {
        assert.equal(registry.ownerOf(name), owner);
        assert.equal(registry.get(name)?.spec.name, name);
      }
      assert.deepEqual(heard, expected);
    }),
  );
});

void test('tool names are lower_snake_case of at most 64 characters', () => {
  const registry = new ToolRegistry();
  for (const bad of ['', 'Remember', '1st', 'set-device', 'a'.repeat(65), 'x y']) assert.throws(() => registry.register('t', tool(bad)), /lower_snake_case/, bad);
  registry.register('t', tool(`a${'_'.repeat(63)}`));
  assert.deepEqual(registry.names(), [`a${'_'.repeat(63)}`]);
});

void test('problems(): none for valid arguments, "path: message" lines otherwise (at most 5), and an unknown tool', () => {
  const registry = new ToolRegistry().register('memory', tool('recall'));
  assert.deepEqual(registry.problems('recall', { query: 'wifi' }), []);
  assert.deepEqual(registry.problems('recall', { query: 'wifi', limit: 3 }), []);
  const wrong = registry.problems('recall', { query: '', limit: 0 });
  assert.ok(wrong.length > 0 && wrong.length <= 5, wrong.join('\n'));
  assert.ok(wrong.some((l) => l.startsWith('/query: ')) && wrong.some((l) => l.startsWith('/limit: ')), wrong.join('\n'));
  const wide = defineTool({ spec: { name: 'wide', description: 'eight required fields', parameters: Type.Object(Object.fromEntries([...'abcdefgh'].map((k) => [k, Type.String()]))) }, safety: 'passive', run: () => Promise.resolve({ summary: 'wide' }) });
  assert.equal(registry.register('memory', wide).problems('wide', {}).length, 5, 'eight missing fields, five lines');
  assert.deepEqual(registry.problems('remember', { query: 'x' }), ['unknown tool remember']);
});

void test('specs(): all tools in registration order, or a subset in the order asked with unknown names skipped', () => {
  const registry = new ToolRegistry().register('memory', tool('remember')).register('memory', tool('recall')).register('identity', tool('who_am_i'));
  assert.deepEqual(registry.specs().map((s) => s.name), ['remember', 'recall', 'who_am_i']);
  assert.deepEqual(registry.specs(['who_am_i', 'gone', 'remember']).map((s) => s.name), ['who_am_i', 'remember']);
  assert.deepEqual(registry.specs([]), []);
  // A tool offered everywhere joins any subset, once.
  registry.register('taskflows', { ...tool('start_taskflow'), everywhere: true });
  assert.deepEqual(registry.specs(['who_am_i']).map((s) => s.name), ['who_am_i', 'start_taskflow']);
  assert.deepEqual(registry.specs(['start_taskflow', 'recall']).map((s) => s.name), ['start_taskflow', 'recall']);
  assert.deepEqual(registry.specs().map((s) => s.name), ['remember', 'recall', 'who_am_i', 'start_taskflow']);
  // A trailing * names every tool with that prefix (generated device tools come and go).
  registry.register('hardware', tool('hwdev_lamp__set_power')).register('hardware', tool('hwdev_thermo__set_target'));
  assert.deepEqual(registry.specs(['recall', 'hwdev_*']).map((s) => s.name), ['recall', 'hwdev_lamp__set_power', 'hwdev_thermo__set_target', 'start_taskflow']);
  assert.deepEqual(registry.specs(['hwdev_*', 'hwdev_lamp__set_power']).map((s) => s.name), ['hwdev_lamp__set_power', 'hwdev_thermo__set_target', 'start_taskflow'], 'once each');
  assert.deepEqual(registry.specs(['nothing_*']).map((s) => s.name), ['start_taskflow']);
});

void test('a tool\'s argument schema is compiled on its first check, not at registration', () => {
  // A schema the compiler cannot compile: registering does not notice; the first check does.
  const broken = defineTool({ spec: { name: 'lazy_tool', description: 'compiled on first use', parameters: Type.Unsafe({ [Kind]: 'NoSuchKind' }) }, safety: 'passive', run: () => Promise.resolve({ summary: 'ok' }) });
  const registry = new ToolRegistry().register('test', broken);
  assert.deepEqual(registry.names(), ['lazy_tool']);
  assert.throws(() => registry.problems('lazy_tool', {}));
});

void test('a plain JSON Schema (a skill\'s params, an MCP tool\'s inputSchema) is checked by Ajv; one that does not compile refuses every call', () => {
  const plain = { type: 'object', properties: { value: { type: 'number' }, unit: { type: 'string', enum: ['m', 'ft'] } }, required: ['value'], additionalProperties: false };
  const registry = new ToolRegistry()
    .register('skill:convert', defineTool({ spec: { name: 'skill_convert', description: 'plain schema', parameters: Type.Unsafe(plain) }, safety: 'passive', run: () => Promise.resolve({ summary: 'ok' }) }))
    .register('mcp:bad', defineTool({ spec: { name: 'mcp_bad_tool', description: 'broken schema', parameters: Type.Unsafe({ type: 'object', properties: { a: { type: 'no-such-type' } } }) }, safety: 'passive', run: () => Promise.resolve({ summary: 'ok' }) }));
  // Bare, as parsed from JSON, too.
  registry.register('mcp:bare', defineTool({ spec: { name: 'mcp_bare', description: 'bare schema', parameters: JSON.parse(JSON.stringify(plain)) as TSchema }, safety: 'passive', run: () => Promise.resolve({ summary: 'ok' }) }));
  assert.deepEqual(registry.problems('mcp_bare', { value: 'x' }), ['/value: must be number']);
  assert.deepEqual(registry.problems('skill_convert', { value: 3, unit: 'm' }), []);
  assert.deepEqual(registry.problems('skill_convert', { unit: 'yd', extra: 1 }), ['/: must have required property \'value\'', '/: must NOT have additional properties', '/unit: must be equal to one of the allowed values']);
  const bad = registry.problems('mcp_bad_tool', { a: 1 });
  assert.equal(bad.length, 1);
  assert.match(bad[0]!, /not valid JSON Schema/);
});
