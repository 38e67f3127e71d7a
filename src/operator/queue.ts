/**
 * A work queue keyed by plan name: at most one handler runs per key at a time (events for one plan
 * never interleave), keys queued while their handler runs are coalesced into one more run, and a
 * failed run is retried with exponential backoff. Different keys run concurrently.
 */
import type { Logger } from 'pino';

/** What a handler asks for after a run. */
export interface HandlerResult {
  /** Run again after this many ms (e.g. a bounded wait timed out). */
  requeueAfterMs?: number;
}

/** Handles one key; throwing means "failed, retry with backoff". */
export type KeyHandler = (key: string, signal: AbortSignal) => Promise<HandlerResult | void>;

/** Backoff of failed runs: 1 s doubling to 60 s. */
const BASE_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

/** Per-key serial queue. See the module comment. */
export class KeyedQueue {
  private readonly dirty = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(
    private readonly handler: KeyHandler,
    private readonly log: Logger,
  ) {}

  /** Queues `key` (coalesced with a pending run of the same key). */
  add(key: string): void {
    if (this.closed) return;
    this.dirty.add(key);
    if (!this.running.has(key)) this.start(key);
  }

  /** Queues `key` after `ms` (a later add() runs it sooner; the earliest timer wins). */
  addAfter(key: string, ms: number): void {
    if (this.closed || this.timers.has(key)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  /** Stops taking work, aborts handlers' long waits (`signal`), and waits for running handlers to return. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.dirty.clear();
    this.abort.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  /** Number of keys with a handler running. */
  get active(): number {
    return this.running.size;
  }

  private start(key: string): void {
    const loop = (async () => {
      while (this.dirty.has(key) && !this.closed) {
        this.dirty.delete(key);
        try {
          const res = await this.handler(key, this.abort.signal);
          this.failures.delete(key);
          if (res?.requeueAfterMs !== undefined) this.addAfter(key, res.requeueAfterMs);
        } catch (err) {
          const n = (this.failures.get(key) ?? 0) + 1;
          this.failures.set(key, n);
          const delay = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (n - 1));
          this.log.warn({ err, plan: key, attempt: n, retryInMs: delay }, 'reconcile failed; retrying');
          this.addAfter(key, delay);
        }
      }
    })();
    this.running.set(key, loop);
    void loop.finally(() => {
      this.running.delete(key);
      // A key added between the loop's last check and now (cannot happen in one tick, but be safe).
      if (this.dirty.has(key) && !this.closed) this.start(key);
    });
  }
}
