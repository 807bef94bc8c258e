// Shortening a text for display: activity titles, wiki snippets, quoted requests, CLI listings. It is
// here, beside the wire's string rules (text.ts), because the brain and the CLI both use it and a cut
// must keep the string valid under those rules: it never splits a surrogate pair, which would leave an
// unpaired surrogate that UTF-8 cannot encode.

const ELLIPSIS = '…';

/**
 * `s` when it is at most `max` UTF-16 code units long; otherwise its start cut so that, with a closing
 * "…", the result is at most `max` long. A cut never ends between the halves of a surrogate pair (the
 * result is then one unit shorter). `max` below 1 gives ''.
 */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  if (!(max >= 1)) return '';
  let end = Math.floor(max) - 1;
  if (end > 0 && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end--;
  return s.slice(0, end) + ELLIPSIS;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
