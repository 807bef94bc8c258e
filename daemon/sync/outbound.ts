// What a peer lacks (docs/sync.md "The session"): the ops of the op log above the peer's cursor, oldest
// stamp first, in batches bounded by bytes. Each origin's ops are read by seq from the (origin, seq)
// index and the origins merged by stamp, so a peer that is up to date costs one short query per
// origin, and each origin's ops reach the peer in seq order (its cursor counts them without gaps).
// The log is read as it was when the reading began: ops appended later wait for the next pull.
import type { Cursor } from '../../protocol/sync-link';
import type { Db } from '../kernel/capability';

const PAGE = 256;

interface Row {
  seq: number;
  hlc: string;
  op: string;
}

/** One origin's ops above `after`, read a page at a time. */
class OriginReader {
  private rows: Row[] = [];
  private done = false;

  constructor(
    private readonly db: Db,
    private readonly origin: string,
    private after: number,
    private readonly maxOrd: number,
  ) {}

  head(): Row | undefined {
    if (this.rows.length === 0 && !this.done) {
      this.rows = this.db.all<Row>('SELECT seq, hlc, op FROM sync_ops WHERE origin = ? AND seq > ? AND ord <= ? ORDER BY seq LIMIT ?', [this.origin, this.after, this.maxOrd, PAGE]);
      this.done = this.rows.length < PAGE;
    }
    return this.rows[0];
  }

  take(): Row {
    const row = this.rows.shift()!;
    this.after = row.seq;
    return row;
  }
}

/**
 * The ops the holder of `since` lacks (the session's SyncData.ops): batches of parsed ops, each about
 * `maxBytes` of JSON at most (an op bigger than that travels alone), oldest stamp first.
 */
export async function* outboundOps(db: Db, since: Cursor, maxBytes: number): AsyncGenerator<unknown[]> {
  const maxOrd = db.get<{ m: number | null }>('SELECT MAX(ord) AS m FROM sync_ops')?.m ?? 0;
  const readers = db.all<{ origin: string }>('SELECT origin FROM sync_applied ORDER BY origin').map((r) => new OriginReader(db, r.origin, since[r.origin] ?? 0, maxOrd));
  let batch: unknown[] = [];
  let bytes = 0;
  for (;;) {
    let next: OriginReader | undefined;
    for (const r of readers) {
      const h = r.head();
      if (h !== undefined && (next === undefined || h.hlc < next.head()!.hlc)) next = r;
    }
    if (next === undefined) break;
    const row = next.take();
    const size = Buffer.byteLength(row.op) + 1;
    if (batch.length > 0 && bytes + size > maxBytes) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(JSON.parse(row.op) as unknown);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}
