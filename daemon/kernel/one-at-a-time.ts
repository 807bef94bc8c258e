// Work that must not overlap (a listener rebinding, access-mode changes, skill installs, the MCP client
// set): each piece starts once the one before it has ended, succeeded or failed. The chain only orders
// the work; every caller receives its own result or failure.
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => T | Promise<T>): Promise<T> {
    const next = this.tail.then(work);
    // The tail only waits on `next`; its failure is the caller's, who got `next` itself.
    this.tail = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }
}
