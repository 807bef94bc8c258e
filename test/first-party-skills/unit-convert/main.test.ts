// skills/builtin/unit-convert through the real sandbox: known conversions of every kind, temperature
// exact at its fixed points, names matched with and without case (ambiguous ones refused), errors that
// name the problem (unknown unit, another kind, below absolute zero, out of range), no tool or network
// call, and fast-check properties: a → b → a comes back within tolerance for any two units of a kind,
// and two units of different kinds always end in a ConversionError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { runSkill } from '../../../skills/sandbox';
import { builtinSkill, paramProblems, runBuiltin, resultOf, type BuiltinRun } from '../builtin-rig';

interface Converted {
  value: number;
  from: string;
  to: string;
  kind: string;
  result: number;
  text: string;
}

const convert = (value: number, from: string, to: string): Promise<BuiltinRun> => runBuiltin('unit-convert', { value, from, to });
const result = async (value: number, from: string, to: string): Promise<number> => resultOf<Converted>(await convert(value, from, to)).result;

/** The message of a run that must have ended as an error kill. */
async function refusal(value: number, from: string, to: string): Promise<string> {
  const { outcome } = await convert(value, from, to);
  assert.equal(outcome.ok === false && outcome.kill, 'error', JSON.stringify(outcome));
  return outcome.ok ? '' : outcome.message;
}

const close = (actual: number, expected: number, tolerance = 1e-9): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${actual} is not ${expected}`);

test('the manifest reaches nothing: no network, no tools, a manual trigger; params need value, from and to', async () => {
  const { manifest } = await builtinSkill('unit-convert');
  assert.deepEqual(manifest.permissions, { network: { allow: [] }, tools: [] });
  assert.deepEqual(manifest.triggers, [{ type: 'manual' }]);
  assert.deepEqual(await paramProblems('unit-convert', { value: 1, from: 'km', to: 'mi' }), []);
  assert.notDeepEqual(await paramProblems('unit-convert', { value: '1', from: 'km', to: 'mi' }), []);
  assert.notDeepEqual(await paramProblems('unit-convert', { value: 1, from: 'km' }), []);
  assert.notDeepEqual(await paramProblems('unit-convert', { value: 1, from: 'km', to: 'mi', extra: true }), []);
});

test('a conversion of each kind, with the canonical symbols and a short text', async () => {
  const out = resultOf<Converted>(await convert(5, 'km', 'mi'));
  assert.deepEqual({ ...out, result: Number(out.result.toFixed(6)) }, { value: 5, from: 'km', to: 'mi', kind: 'length', result: 3.106856, text: '5 km = 3.10686 mi' });
  const cases: [number, string, string, number][] = [
    [1, 'in', 'cm', 2.54],
    [1, 'mi', 'ft', 5280],
    [1, 'lb', 'g', 453.59237],
    [16, 'oz', 'lb', 1],
    [1, 'gal', 'l', 3.785411784],
    [1, 'imp gal', 'imp pt', 8],
    [3, 'tsp', 'tbsp', 1],
    [100, 'km/h', 'm/s', 27.7777777778],
    [1, 'kn', 'km/h', 1.852],
    [60, 'mph', 'km/h', 96.56064],
    [1, 'ha', 'm2', 10000],
    [640, 'acre', 'mi2', 1],
    [1, 'GiB', 'MiB', 1024],
    [1, 'GB', 'MB', 1000],
    [100, 'Mbit', 'MB', 12.5],
    [1, 'B', 'bit', 8],
    [90, 'min', 'h', 1.5],
    [2, 'wk', 'd', 14],
    [1, 'yr', 'd', 365.25],
    [1500, 'ms', 's', 1.5],
  ];
  for (const [value, from, to, expected] of cases) close(await result(value, from, to), expected);
});

test('temperature is affine and exact at its fixed points', async () => {
  const exact: [number, string, string, number][] = [
    [0, '°C', '°F', 32],
    [100, '°C', '°F', 212],
    [-40, '°C', '°F', -40],
    [-40, '°F', '°C', -40],
    [32, 'F', 'C', 0],
    [212, 'fahrenheit', 'celsius', 100],
    [0, 'K', '°C', -273.15],
    [0, '°C', 'K', 273.15],
    [273.15, 'kelvin', 'C', 0],
    [373.15, 'K', '°F', 212],
    [0, 'K', '°F', -459.67],
    [0, '°R', 'K', 0],
    [491.67, 'rankine', '°C', 0],
    [37, '°C', '°F', 98.6],
    [20, 'degC', 'K', 293.15],
    [50, 'degrees Fahrenheit', '°C', 10],
  ];
  for (const [value, from, to, expected] of exact) assert.equal(await result(value, from, to), expected, `${value} ${from} → ${to}`);
});

test('names: case-folded when one unit answers, plurals, symbols and spacing; an ambiguous name is refused', async () => {
  close(await result(1, 'KM', 'Miles'), 0.621371192237, 1e-11);
  close(await result(2, 'kilometres', 'metres'), 2000);
  close(await result(1, 'km²', 'm^2'), 1e6);
  close(await result(1, 'µm', 'nm'), 1000);
  close(await result(1, 'km / h', 'KPH'), 1);
  close(await result(3, 'feet', 'yards'), 1);
  close(await result(1, 'Mb', 'kb'), 1000, 1e-12);
  assert.match(await refusal(1, 'mb', 'B'), /"mb" is ambiguous: MB \(data\) or Mbit \(data\)\? Write the unit with its case/);
  assert.match(await refusal(1, 'B', 'gb'), /"gb" is ambiguous: GB \(data\) or Gbit \(data\)\?/);
});

test('errors name the problem: an unknown unit, two kinds, below absolute zero, a result past a number', async () => {
  assert.match(await refusal(1, 'furlong', 'm'), /^ConversionError: unknown unit "furlong" \(units of length, mass/);
  assert.match(await refusal(1, 'km', 'kg'), /^ConversionError: cannot convert km \(length\) to kg \(mass\); units of length: m, km, /);
  assert.match(await refusal(1, '°C', 'MB'), /cannot convert °C \(temperature\) to MB \(data\)/);
  assert.match(await refusal(-1, 'K', '°C'), /-1 K is below absolute zero/);
  assert.match(await refusal(-500, '°F', 'K'), /below absolute zero/);
  assert.match(await refusal(1e308, 'PiB', 'bit'), /out of the range of a number/);
  assert.match(await refusal(1, ' ', 'm'), /a unit is a non-empty string/);
});

test('a conversion calls no tool', async () => {
  const run = await convert(1, 'km', 'm');
  assert.deepEqual(run.calls, []);
  assert.deepEqual(run.outcome.logs, []);
});

// The units of each kind, read from the skill's own tables: its source with a later `main` that
// returns them (the last declaration wins), so a unit added there is covered here without a second list.
async function unitsByKind(): Promise<Record<string, string[]>> {
  const { source } = await builtinSkill('unit-convert');
  const lister = 'function main() { return { ...Object.fromEntries(Object.entries(LINEAR).map(([k, rows]) => [k, rows.map((r) => r[0])])), temperature: TEMPERATURE.map((r) => r[0]) } }';
  const out = await runSkill({ source: `${source}\n${lister}`, params: {}, host: { tools: [], callTool: () => Promise.reject(new Error('none')), http: () => Promise.reject(new Error('none')) } });
  if (!out.ok) throw new Error(out.message);
  return out.result as Record<string, string[]>;
}

test('the unit table read for the properties has every kind', async () => {
  const kinds = await unitsByKind();
  assert.deepEqual(Object.keys(kinds).sort(), ['area', 'data', 'length', 'mass', 'speed', 'temperature', 'time', 'volume']);
  assert.deepEqual(kinds.temperature, ['°C', '°F', 'K', '°R']);
  assert.ok(kinds.volume!.includes('fl oz') && kinds.data!.includes('PiB'));
});

test('property: a → b → a comes back within tolerance, for any two units of one kind', async () => {
  const kinds = await unitsByKind();
  const linear = Object.entries(kinds).filter(([k]) => k !== 'temperature');
  const pair = fc.constantFrom(...linear).chain(([, units]) => fc.tuple(fc.constantFrom(...units), fc.constantFrom(...units)));
  const magnitude = fc.double({ min: 1e-6, max: 1e9, noNaN: true }).chain((m) => fc.constantFrom(m, -m));
  await fc.assert(
    fc.asyncProperty(pair, magnitude, async ([a, b], v) => {
      const there = await result(v, a, b);
      const back = await result(there, b, a);
      assert.ok(Math.abs(back - v) <= 1e-9 * Math.abs(v), `${v} ${a} → ${there} ${b} → ${back} ${a}`);
    }),
    { numRuns: 150 },
  );
});

test('property: temperature round trips stay within tolerance, above absolute zero', async () => {
  const units = (await unitsByKind()).temperature!;
  // Kelvin readings from absolute zero up, expressed in the unit the run starts from.
  const start = fc.tuple(fc.constantFrom(...units), fc.constantFrom(...units), fc.double({ min: 0, max: 1e6, noNaN: true }));
  await fc.assert(
    fc.asyncProperty(start, async ([a, b, kelvin]) => {
      const v = await result(kelvin, 'K', a);
      const there = await result(v, a, b);
      const back = await result(there, b, a);
      // Affine: the error scales with the readings and the offsets (up to 491.67), not with v alone.
      assert.ok(Math.abs(back - v) <= 1e-9 * (Math.abs(v) + Math.abs(there) + 500), `${v} ${a} → ${there} ${b} → ${back} ${a}`);
    }),
    { numRuns: 150 },
  );
});

test('property: units of two different kinds never convert', async () => {
  const kinds = Object.entries(await unitsByKind());
  const twoKinds = fc.tuple(fc.constantFrom(...kinds), fc.constantFrom(...kinds)).filter(([x, y]) => x[0] !== y[0]);
  await fc.assert(
    fc.asyncProperty(twoKinds, fc.nat(1000), async ([[kx, ux], [ky, uy]], i) => {
      const a = ux[i % ux.length]!;
      const b = uy[i % uy.length]!;
      assert.match(await refusal(1, a, b), new RegExp(`cannot convert .*\\(${kx}\\) to .*\\(${ky}\\)`));
    }),
    { numRuns: 60 },
  );
});
