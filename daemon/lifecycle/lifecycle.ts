// Process-wide run state shared by the HTTP layer (503 while closing) and health.
export class Lifecycle {
  private readonly startedAt = performance.now();
  stopping = false;

  uptimeSeconds(): number {
    return (performance.now() - this.startedAt) / 1000;
  }
}
