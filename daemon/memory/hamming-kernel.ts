// Hamming distances between one sign code and many, in WebAssembly: i64.popcnt is one instruction
// (POPCNT on x86-64, CNT on ARM64) where JavaScript needs a dozen shifts and masks per 32 bits —
// measured 8 ms -> ~1 ms for 170k codes of 384 bits (bench/sections/memory.mjs). The module is ~120
// bytes, assembled here from its opcodes so there is no binary blob to trust and no build step; the
// property test in test/daemon/memory/vector-index.test.ts checks it against brute force.
//
// (func hamming (param q codes n words out)      ;; byte offsets into memory; words = u64 per code
//   for i in 0..n: out.u16[i] = Σ_j popcnt(q.u64[j] xor codes.u64[i*words + j]))

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (s: string): number[] => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];

const I32 = 0x7f;
const I64 = 0x7e;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  i32Const: 0x41,
  i64Const: 0x42,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Shl: 0x74,
  i64Load: 0x29,
  i64Store16: 0x3d,
  i64Popcnt: 0x7b,
  i64Add: 0x7c,
  i64Xor: 0x85,
} as const;
// Locals: params 0..4, then i, j (i32) and d (i64).
const [Q, CODES, N, WORDS, OUT, I, J, D] = [0, 1, 2, 3, 4, 5, 6, 7];

const body = [
  ...[2, 2, I32, 1, I64], // two local declarations: 2 x i32, 1 x i64
  ...op.block,
  ...op.loop,
  ...[op.get, I, op.get, N, op.i32GeU, op.brIf, 1], // i >= n: done
  ...[op.i64Const, 0, op.set, D, op.i32Const, 0, op.set, J],
  ...op.block,
  ...op.loop,
  ...[op.get, J, op.get, WORDS, op.i32GeU, op.brIf, 1], // j >= words: row done
  ...[op.get, D],
  ...[op.get, Q, op.get, J, op.i32Const, 3, op.i32Shl, op.i32Add, op.i64Load, 3, 0], // q.u64[j]
  ...[op.get, CODES, op.i64Load, 3, 0], // the code's next u64
  ...[op.i64Xor, op.i64Popcnt, op.i64Add, op.set, D],
  ...[op.get, CODES, op.i32Const, 8, op.i32Add, op.set, CODES],
  ...[op.get, J, op.i32Const, 1, op.i32Add, op.set, J, op.br, 0],
  op.end,
  op.end,
  ...[op.get, OUT, op.get, I, op.i32Const, 1, op.i32Shl, op.i32Add, op.get, D, op.i64Store16, 1, 0], // out.u16[i] = d
  ...[op.get, I, op.i32Const, 1, op.i32Add, op.set, I, op.br, 0],
  op.end,
  op.end,
  op.end, // function
];

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // \0asm, version 1
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]), // type: (i32 x5) -> ()
  ...section(3, [1, 0]), // one function of type 0
  ...section(5, [1, 0x00, 1]), // memory: 1 page, no maximum
  ...section(7, [2, ...name('mem'), 0x02, 0, ...name('hamming'), 0x00, 0]),
  ...section(10, [1, ...uleb(body.length), ...body]),
]);

const PAGE = 65_536;

// The WebAssembly global, typed here: @types/node 20 leaves it to lib.dom.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

/** Codes of `words` u64 each, held in the kernel's memory: [query | distances | codes]. */
export class HammingKernel {
  private readonly memory: WasmMemory;
  private readonly hamming: (q: number, codes: number, n: number, words: number, out: number) => void;
  private capacity = 0;
  private u64 = new BigUint64Array(0);
  private u32 = new Uint32Array(0);

  constructor(readonly words: number) {
    const instance = new wasm.Instance(new wasm.Module(MODULE));
    this.memory = instance.exports.mem as WasmMemory;
    this.hamming = instance.exports.hamming as HammingKernel['hamming'];
    this.views();
  }

  /** Byte offsets: the query, then room for `capacity` distances, then the codes. */
  private get distances(): number {
    return this.words * 8;
  }
  private get codes(): number {
    return this.distances + Math.ceil((this.capacity * 2) / 8) * 8;
  }

  /** Makes room for `rows` codes, keeping the first `used`. */
  reserve(rows: number, used: number): void {
    if (rows <= this.capacity) return;
    const capacity = Math.max(rows, Math.ceil(this.capacity * 1.5) + 1024);
    const oldCodes = this.codes;
    const bytes = this.words * 8 + Math.ceil((capacity * 2) / 8) * 8 + capacity * this.words * 8;
    if (bytes > this.memory.buffer.byteLength) this.memory.grow(Math.ceil((bytes - this.memory.buffer.byteLength) / PAGE));
    this.views();
    this.capacity = capacity;
    // The distance area grew, so the codes move up (copyWithin handles the overlap).
    new Uint8Array(this.memory.buffer).copyWithin(this.codes, oldCodes, oldCodes + used * this.words * 8);
  }

  /** Writes a sign code (32-bit words, as signCode() makes them) into row `row`. */
  set(row: number, code: Uint32Array): void {
    const at = this.codes / 4 + row * this.words * 2;
    this.u32.fill(0, at, at + this.words * 2);
    this.u32.set(code, at);
  }

  /** Copies row `from` over row `to`. */
  move(from: number, to: number): void {
    const w = this.words;
    const base = this.codes / 8;
    this.u64.copyWithin(base + to * w, base + from * w, base + (from + 1) * w);
  }

  /** Hamming distance from `query` to each of the first `n` rows (a view valid until the next call). */
  distancesTo(query: Uint32Array, n: number): Uint16Array {
    this.u32.fill(0, 0, this.words * 2);
    this.u32.set(query, 0);
    this.hamming(0, this.codes, n, this.words, this.distances);
    return new Uint16Array(this.memory.buffer, this.distances, n);
  }

  private views(): void {
    this.u64 = new BigUint64Array(this.memory.buffer);
    this.u32 = new Uint32Array(this.memory.buffer);
  }
}
