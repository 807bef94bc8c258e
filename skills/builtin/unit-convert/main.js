// unit-convert, a first-party skill (docs/skills.md "First-party skills"): converts {value, from, to}
// between units of one kind, offline, with no host call. Linear kinds (length, mass, volume, speed,
// area, data, time) go through their base unit by an exact factor; temperature is affine and goes
// through degrees Celsius as (v - zero) * num / den, so the usual points (0 °C = 32 °F, 100 °C = 212 °F,
// -40 °C = -40 °F, 0 K = -273.15 °C) come out exact. Results are rounded to 12 significant digits,
// which removes binary noise (273.15000000000003) and keeps any round trip within 1e-11 of its start.
// A unit that is unknown, ambiguous (mb: megabyte or megabit?) or of another kind ends the run with a
// thrown ConversionError naming the problem and the units that would fit.

class ConversionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ConversionError';
  }
}

// [symbol, factor to the kind's base unit, other names]. Names match exactly first, then ignoring
// case when only one unit answers to them (so KM is km, but mb is refused as ambiguous).
const LINEAR = {
  length: [
    ['m', 1, 'meter', 'metre'],
    ['km', 1000, 'kilometer', 'kilometre'],
    ['cm', 0.01, 'centimeter', 'centimetre'],
    ['mm', 0.001, 'millimeter', 'millimetre'],
    ['um', 1e-6, 'micrometer', 'micrometre', 'micron'],
    ['nm', 1e-9, 'nanometer', 'nanometre'],
    ['in', 0.0254, 'inch', 'inches', '"'],
    ['ft', 0.3048, 'foot', 'feet', "'"],
    ['yd', 0.9144, 'yard'],
    ['mi', 1609.344, 'mile'],
    ['nmi', 1852, 'nautical mile'],
  ],
  mass: [
    ['kg', 1, 'kilogram', 'kilo'],
    ['g', 0.001, 'gram', 'gramme'],
    ['mg', 1e-6, 'milligram'],
    ['ug', 1e-9, 'mcg', 'microgram'],
    ['t', 1000, 'tonne', 'metric ton'],
    ['lb', 0.45359237, 'lbs', 'pound'],
    ['oz', 0.028349523125, 'ounce'],
    ['st', 6.35029318, 'stone', 'stones'],
  ],
  volume: [
    ['m3', 1, 'cubic meter', 'cubic metre'],
    ['l', 0.001, 'L', 'liter', 'litre'],
    ['ml', 1e-6, 'mL', 'milliliter', 'millilitre'],
    ['cl', 1e-5, 'cL', 'centiliter', 'centilitre'],
    ['dl', 1e-4, 'dL', 'deciliter', 'decilitre'],
    ['cm3', 1e-6, 'cc', 'cubic centimeter', 'cubic centimetre'],
    ['gal', 0.003785411784, 'gallon', 'us gal', 'us gallon'],
    ['qt', 0.000946352946, 'quart'],
    ['pt', 0.000473176473, 'pint', 'us pt', 'us pint'],
    ['cup', 0.0002365882365],
    ['fl oz', 0.0000295735295625, 'floz', 'fluid ounce'],
    ['tbsp', 0.00001478676478125, 'tablespoon'],
    ['tsp', 0.00000492892159375, 'teaspoon'],
    ['imp gal', 0.00454609, 'uk gal', 'imperial gallon'],
    ['imp pt', 0.00056826125, 'uk pt', 'imperial pint'],
    ['ft3', 0.028316846592, 'cu ft', 'cubic foot', 'cubic feet'],
    ['in3', 0.000016387064, 'cu in', 'cubic inch', 'cubic inches'],
  ],
  speed: [
    ['m/s', 1, 'mps', 'meter per second', 'meters per second', 'metres per second'],
    ['km/h', 1 / 3.6, 'kmh', 'kph', 'kilometer per hour', 'kilometers per hour', 'kilometres per hour'],
    ['mph', 0.44704, 'mi/h', 'mile per hour', 'miles per hour'],
    ['kn', 1852 / 3600, 'kt', 'knot'],
    ['ft/s', 0.3048, 'fps', 'foot per second', 'feet per second'],
  ],
  area: [
    ['m2', 1, 'sq m', 'square meter', 'square metre'],
    ['km2', 1e6, 'sq km', 'square kilometer', 'square kilometre'],
    ['cm2', 1e-4, 'sq cm', 'square centimeter', 'square centimetre'],
    ['mm2', 1e-6, 'sq mm', 'square millimeter', 'square millimetre'],
    ['ha', 1e4, 'hectare'],
    ['acre', 4046.8564224, 'ac'],
    ['ft2', 0.09290304, 'sq ft', 'square foot', 'square feet'],
    ['in2', 0.00064516, 'sq in', 'square inch', 'square inches'],
    ['yd2', 0.83612736, 'sq yd', 'square yard'],
    ['mi2', 2589988.110336, 'sq mi', 'square mile'],
  ],
  // Decimal prefixes are powers of 1000 (kB, MB, and KB read as kB); binary ones powers of 1024 (KiB).
  data: [
    ['B', 1, 'byte'],
    ['bit', 0.125, 'b'],
    ['kB', 1e3, 'KB', 'kilobyte'],
    ['MB', 1e6, 'megabyte'],
    ['GB', 1e9, 'gigabyte'],
    ['TB', 1e12, 'terabyte'],
    ['PB', 1e15, 'petabyte'],
    ['KiB', 1024, 'kibibyte'],
    ['MiB', 1024 ** 2, 'mebibyte'],
    ['GiB', 1024 ** 3, 'gibibyte'],
    ['TiB', 1024 ** 4, 'tebibyte'],
    ['PiB', 1024 ** 5, 'pebibyte'],
    ['kbit', 125, 'kb', 'Kb', 'kilobit'],
    ['Mbit', 125e3, 'Mb', 'megabit'],
    ['Gbit', 125e6, 'Gb', 'gigabit'],
    ['Tbit', 125e9, 'Tb', 'terabit'],
  ],
  // A month is a twelfth and a year 365.25 days (the Julian year).
  time: [
    ['s', 1, 'sec', 'second'],
    ['ms', 1e-3, 'millisecond'],
    ['us', 1e-6, 'microsecond'],
    ['ns', 1e-9, 'nanosecond'],
    ['min', 60, 'minute'],
    ['h', 3600, 'hr', 'hrs', 'hour'],
    ['d', 86400, 'day'],
    ['wk', 604800, 'week'],
    ['mo', 2629800, 'month'],
    ['yr', 31557600, 'y', 'year'],
  ],
};

// [symbol, the reading at 0 °C, degree size in °C as [num, den], other names]: °C = (v - zero) * num / den.
const TEMPERATURE = [
  ['°C', 0, [1, 1], 'C', 'celsius', 'centigrade'],
  ['°F', 32, [5, 9], 'F', 'fahrenheit'],
  ['K', 273.15, [1, 1], 'kelvin'],
  ['°R', 491.67, [5, 9], 'R', 'rankine'],
];
const ABSOLUTE_ZERO_C = -273.15;
const KINDS = [...Object.keys(LINEAR), 'temperature'];

/** Every unit as {symbol, kind, factor} or {symbol, kind, zero, num, den}, by exact name and by lower-case name. */
function buildIndex() {
  const exact = new Map();
  const folded = new Map();
  const add = (name, unit) => {
    exact.set(name, unit);
    const key = name.toLowerCase();
    if (!folded.has(key)) folded.set(key, new Set());
    folded.get(key).add(unit);
  };
  for (const [kind, rows] of Object.entries(LINEAR)) {
    for (const [symbol, factor, ...names] of rows) {
      const unit = { symbol, kind, factor };
      for (const name of [symbol, ...names]) add(name, unit);
    }
  }
  for (const [symbol, zero, [num, den], ...names] of TEMPERATURE) {
    const unit = { symbol, kind: 'temperature', zero, num, den };
    for (const name of [symbol, ...names]) add(name, unit);
  }
  return { exact, folded };
}
const INDEX = buildIndex();

/** "  °C" → "C", "km²" → "km2", "µm" → "um", "degrees Fahrenheit" → "Fahrenheit", "sq  ft" → "sq ft". */
function normalise(raw) {
  return raw
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[µμ]/g, 'u')
    .replace(/²|\^2/g, '2')
    .replace(/³|\^3/g, '3')
    .replace(/^(?:degrees?\s+|deg\s*)(?=\S)/i, '')
    .replace(/^[°º]\s*/, '')
    .replace(/^(.+?)\s*\/\s*(.+)$/, '$1/$2');
}

function lookup(raw) {
  if (typeof raw !== 'string' || raw.trim() === '') throw new ConversionError('a unit is a non-empty string such as "km" or "°F"');
  const name = normalise(raw);
  const unit = INDEX.exact.get(name) ?? folded(raw, name.toLowerCase()) ?? (name.length >= 3 && /s$/i.test(name) ? folded(raw, name.slice(0, -1).toLowerCase()) : null);
  if (unit) return unit;
  throw new ConversionError(`unknown unit "${raw}" (units of ${KINDS.join(', ')}, such as km, lb, l, °F, km/h, acre, MiB, h)`);
}

/** The one unit whose name is `key` ignoring case; null for none; ambiguous names are refused. */
function folded(raw, key) {
  const units = INDEX.folded.get(key);
  if (!units) return null;
  if (units.size === 1) return [...units][0];
  const options = [...units].map((u) => `${u.symbol} (${u.kind})`).join(' or ');
  throw new ConversionError(`"${raw}" is ambiguous: ${options}? Write the unit with its case (MB is megabytes, Mb megabits)`);
}

function unitsOf(kind) {
  return kind === 'temperature' ? TEMPERATURE.map((row) => row[0]) : LINEAR[kind].map((row) => row[0]);
}

function convert(value, from, to) {
  if (from.kind !== to.kind) {
    throw new ConversionError(`cannot convert ${from.symbol} (${from.kind}) to ${to.symbol} (${to.kind}); units of ${from.kind}: ${unitsOf(from.kind).join(', ')}`);
  }
  if (from.kind !== 'temperature') return (value * from.factor) / to.factor;
  const celsius = ((value - from.zero) * from.num) / from.den;
  if (celsius < ABSOLUTE_ZERO_C - 1e-9) throw new ConversionError(`${value} ${from.symbol} is below absolute zero`);
  return (celsius * to.den) / to.num + to.zero;
}

/** 12 significant digits: the binary noise of the factors goes, the precision of a double stays. */
const rounded = (x) => (x === 0 ? 0 : Number(x.toPrecision(12)));
const shown = (x) => String(Number(x.toPrecision(6)));

function main(params) {
  const { value } = params;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ConversionError('value must be a finite number');
  const from = lookup(params.from);
  const to = lookup(params.to);
  const raw = convert(value, from, to);
  if (!Number.isFinite(raw)) throw new ConversionError(`${value} ${from.symbol} in ${to.symbol} is out of the range of a number`);
  const result = rounded(raw);
  return { value, from: from.symbol, to: to.symbol, kind: from.kind, result, text: `${shown(value)} ${from.symbol} = ${shown(result)} ${to.symbol}` };
}
