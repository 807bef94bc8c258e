// Exit codes and "did you mean" hints shared by every svc command.
export const EXIT_USAGE = 2;

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
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
