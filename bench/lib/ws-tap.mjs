// Reads the WebSocket frames passing one direction of a proxied connection (RFC 6455 section 5.2),
// without changing them, and counts them by their JSON `type`; a sync `batch` whose `seq` this
// connection already carried is counted as resent (docs/sync.md "The session": a batch unacknowledged
// for the retransmit interval is sent again). The HTTP upgrade before the first frame is skipped.
// Frames are expected unfragmented and uncompressed, as `ws` sends them without permessage-deflate;
// a compressed or fragmented frame is counted under `unreadable`.

const HEAD = /^\{"type":"([a-z_]+)"(?:,"seq":(\d+))?/;

/** Totals shared by every tap of one direction: frames and bytes by type, and batches resent. */
export function frameTotals() {
  return { byType: {}, resent: { batches: 0, bytes: 0 }, unreadable: 0 };
}

/** A tap for one direction of one connection, adding to `totals`; feed it each chunk as it passes. */
export function wsTap(totals) {
  let buffer = Buffer.alloc(0);
  let upgraded = false;
  const seen = new Set();
  const count = (payload, wireBytes) => {
    const m = HEAD.exec(payload.subarray(0, 64).toString('latin1'));
    if (m === null) return void totals.unreadable++;
    const t = (totals.byType[m[1]] ??= { frames: 0, bytes: 0 });
    t.frames++;
    t.bytes += wireBytes;
    if (m[1] !== 'batch' || m[2] === undefined) return;
    if (seen.has(m[2])) {
      totals.resent.batches++;
      totals.resent.bytes += wireBytes;
    }
    seen.add(m[2]);
  };
  return (chunk) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    if (!upgraded) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      upgraded = true;
      buffer = buffer.subarray(end + 4);
    }
    for (;;) {
      const frame = nextFrame(buffer);
      if (frame === null) return;
      buffer = buffer.subarray(frame.size);
      if (frame.opcode === 1 && frame.fin && !frame.rsv1) count(frame.payload, frame.size);
      else if (frame.opcode <= 2) totals.unreadable++;
    }
  };
}

/** The first whole frame of `buf` (its payload unmasked), or null until it has arrived. */
function nextFrame(buf) {
  if (buf.length < 2) return null;
  const fin = (buf[0] & 0x80) !== 0;
  const rsv1 = (buf[0] & 0x40) !== 0;
  const opcode = buf[0] & 0x0f;
  const masked = (buf[1] & 0x80) !== 0;
  let length = buf[1] & 0x7f;
  let at = 2;
  if (length === 126) {
    if (buf.length < 4) return null;
    length = buf.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (buf.length < 10) return null;
    length = Number(buf.readBigUInt64BE(2));
    at = 10;
  }
  const mask = masked ? buf.subarray(at, at + 4) : null;
  if (masked) at += 4;
  if (buf.length < at + length) return null;
  let payload = buf.subarray(at, at + length);
  if (mask !== null) {
    // Only the head is read: unmask what HEAD looks at.
    const head = Buffer.from(payload.subarray(0, 64));
    for (let i = 0; i < head.length; i++) head[i] ^= mask[i % 4];
    payload = head;
  }
  return { fin, rsv1, opcode, payload, size: at + length };
}
