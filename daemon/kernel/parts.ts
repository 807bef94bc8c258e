// Long-lived parts start in order and stop in reverse (STYLE.md 2); each stop is bounded by a
// timeout and a failing or hanging stop never blocks the rest.
import type { Logger } from 'pino';

export interface Part {
  readonly name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export async function startParts(parts: readonly Part[], logger: Logger): Promise<void> {
  for (const part of parts) {
    await part.start?.();
    logger.debug({ part: part.name }, 'started');
  }
}

export async function stopParts(parts: readonly Part[], logger: Logger, timeoutMs: number): Promise<void> {
  for (const part of [...parts].reverse()) {
    if (!part.stop) continue;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      // Not unref'd: a stop that hangs on something holding no handle must not let the process
      // exit before the remaining parts (the store last of all) have stopped.
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const result = await Promise.race([Promise.resolve(part.stop()).then(() => 'ok' as const), timedOut]);
      if (result === 'timeout') logger.warn({ part: part.name, timeoutMs }, 'stop timed out; continuing');
    } catch (err) {
      logger.error({ err, part: part.name }, 'stop failed; continuing');
    } finally {
      clearTimeout(timer);
    }
  }
}
