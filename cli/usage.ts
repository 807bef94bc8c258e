// Exit codes and "did you mean" hints shared by every svc command.
export const EXIT_USAGE = 2;

/**
 * Optimal string alignment distance: Levenshtein plus adjacent transposition as one edit, the most
 * common typo ("stauts" is one edit from "status", and two from "start").
 */
function distance(a: string, b: string): number {
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
    }
    [prev2, prev] = [prev, cur];
  }
  return prev[b.length]!;
}

/** The known command nearest to a mistyped one, if it is close enough to be a typo. */
export function closestCommand(word: string, commands: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of commands) {
    const d = distance(word, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}
