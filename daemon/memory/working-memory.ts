// Working memory (spec 1.3): in RAM, per session, cleared when the session ends. Bounded by item count
// and by bytes so a runaway tool cannot grow the brain on a Pi; the least recently used item goes first.
// A Map keeps insertion order, so "touch" = delete + set and the first key is the LRU one.

export interface WorkingItem {
  key: string;
  value: string;
}

export interface WorkingMemoryLimits {
  maxItems: number;
  maxBytes: number;
}

export const DEFAULT_WORKING_LIMITS: WorkingMemoryLimits = { maxItems: 256, maxBytes: 256 * 1024 };

const sizeOf = (key: string, value: string): number => Buffer.byteLength(key) + Buffer.byteLength(value);

export class WorkingMemory {
  private readonly items = new Map<string, string>();
  private bytesUsed = 0;

  constructor(readonly limits: WorkingMemoryLimits = DEFAULT_WORKING_LIMITS) {}

  get size(): number {
    return this.items.size;
  }

  get bytes(): number {
    return this.bytesUsed;
  }

  /** Stores (or replaces) an item and evicts LRU items until within bounds. Returns the evicted keys. */
  set(key: string, value: string): string[] {
    if (sizeOf(key, value) > this.limits.maxBytes) throw new RangeError(`working memory item "${key}" is larger than the ${this.limits.maxBytes}-byte bound`);
    this.delete(key);
    this.items.set(key, value);
    this.bytesUsed += sizeOf(key, value);
    return this.evict();
  }

  /** Reads an item and marks it most recently used. */
  get(key: string): string | undefined {
    const value = this.items.get(key);
    if (value === undefined) return undefined;
    this.items.delete(key);
    this.items.set(key, value);
    return value;
  }

  /** Reads without touching the LRU order (listing, snapshots). */
  peek(key: string): string | undefined {
    return this.items.get(key);
  }

  delete(key: string): boolean {
    const value = this.items.get(key);
    if (value === undefined) return false;
    this.items.delete(key);
    this.bytesUsed -= sizeOf(key, value);
    return true;
  }

  clear(): void {
    this.items.clear();
    this.bytesUsed = 0;
  }

  /** Items from least to most recently used (the order restore() needs to rebuild the same LRU state). */
  entries(): WorkingItem[] {
    return [...this.items].map(([key, value]) => ({ key, value }));
  }

  /** Replaces the contents with a snapshot, keeping its LRU order; bounds still apply. */
  restore(items: readonly WorkingItem[]): void {
    this.clear();
    for (const item of items) this.set(item.key, item.value);
  }

  /**
   * Evicts least recently used items until at most `bytes` are held: the brain-wide session memory
   * budget (agent.session_memory_bytes) takes room from a session this way. Returns the evicted keys.
   */
  shrinkTo(bytes: number): string[] {
    return this.evict(Math.max(0, bytes));
  }

  private evict(maxBytes = this.limits.maxBytes): string[] {
    const evicted: string[] = [];
    while (this.items.size > this.limits.maxItems || this.bytesUsed > maxBytes) {
      const oldest = this.items.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
      evicted.push(oldest.value);
    }
    return evicted;
  }
}

/** One WorkingMemory per live session; end(sessionId) drops it (spec 1.3: cleared when the session ends). */
export class WorkingMemoryRegistry {
  private readonly sessions = new Map<string, WorkingMemory>();

  constructor(private readonly limits: WorkingMemoryLimits = DEFAULT_WORKING_LIMITS) {}

  forSession(sessionId: string): WorkingMemory {
    let wm = this.sessions.get(sessionId);
    if (!wm) {
      wm = new WorkingMemory(this.limits);
      this.sessions.set(sessionId, wm);
    }
    return wm;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  end(sessionId: string): void {
    this.sessions.get(sessionId)?.clear();
    this.sessions.delete(sessionId);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }
}
