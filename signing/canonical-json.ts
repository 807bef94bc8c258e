// RFC 8785 (JSON Canonicalization Scheme) through the `canonicalize` package, by the RFC's author: keys
// sorted by UTF-16 code units, ECMAScript number and string serialisation, no whitespace. A signature
// covers these bytes, so two spellings of one manifest (key order, whitespace, `1.0` or `1`) sign alike.
//
// `canonicalize` follows JSON.stringify where JSON has no value: it drops undefined properties, writes
// undefined array items as null and calls toJSON. Signing must not guess, so the value is first checked
// to be plain JSON data (null, booleans, finite numbers, well-formed strings, arrays without holes and
// plain objects), and anything else is a CanonicalJsonError naming where it is.
import canonicalize from 'canonicalize';

export class CanonicalJsonError extends Error {
  constructor(
    /** Where the value is, as a JSON pointer (RFC 6901); '' is the whole value. */
    readonly path: string,
    readonly problem: string,
  ) {
    super(`not canonical JSON at '${path}': ${problem}`);
  }
}

/** The RFC 8785 serialisation of `value`; a CanonicalJsonError for anything JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  assertJsonData(value);
  const text = canonicalize(value);
  if (text === undefined) throw new CanonicalJsonError('', 'no JSON representation');
  return text;
}

const pointer = (parent: string, key: string | number): string => `${parent}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

type Step = { value: unknown; path: string } | { leave: object };

/** Walks `root` with an explicit stack (nesting depth is bounded by memory, not the call stack). */
function assertJsonData(root: unknown): void {
  const stack: Step[] = [{ value: root, path: '' }];
  // The containers being walked: meeting one again below itself is a cycle; a shared subtree is not.
  const ancestors = new Set<object>();
  for (let step = stack.pop(); step !== undefined; step = stack.pop()) {
    if ('leave' in step) {
      ancestors.delete(step.leave);
      continue;
    }
    const children = childrenOf(step.value, step.path);
    if (step.value === null || typeof step.value !== 'object') continue;
    if (ancestors.has(step.value)) throw new CanonicalJsonError(step.path, 'a circular reference');
    ancestors.add(step.value);
    stack.push({ leave: step.value }, ...children);
  }
}

/** The members of a container to check next; a scalar is checked here and has none. */
function childrenOf(value: unknown, path: string): { value: unknown; path: string }[] {
  if (value === null || typeof value === 'boolean') return [];
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalJsonError(path, `${value} is not a JSON number`);
    return [];
  }
  if (typeof value === 'string') {
    assertWellFormed(value, path);
    return [];
  }
  if (Array.isArray(value)) return arrayItems(value, path);
  if (typeof value === 'object' && isPlainObject(value)) return objectMembers(value, path);
  throw new CanonicalJsonError(path, `${describe(value)} has no JSON representation`);
}

function arrayItems(items: readonly unknown[], path: string): { value: unknown; path: string }[] {
  const out: { value: unknown; path: string }[] = [];
  for (let i = 0; i < items.length; i++) {
    if (!(i in items)) throw new CanonicalJsonError(pointer(path, i), 'a hole in an array');
    out.push({ value: items[i], path: pointer(path, i) });
  }
  return out;
}

function objectMembers(object: object, path: string): { value: unknown; path: string }[] {
  if (Object.getOwnPropertySymbols(object).length > 0) throw new CanonicalJsonError(path, 'a symbol key');
  return Object.entries(object as Record<string, unknown>).map(([key, member]) => {
    assertWellFormed(key, pointer(path, key));
    return { value: member, path: pointer(path, key) };
  });
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A lone surrogate has no UTF-8 encoding (RFC 8785 section 3.2.2.2 requires well-formed strings). */
function assertWellFormed(text: string, path: string): void {
  if (LONE_SURROGATE.test(text)) throw new CanonicalJsonError(path, 'a string with a lone surrogate');
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' ? `a ${name}` : 'an object';
}
