/** Small helpers of the benchmark: logging, medians, bounded parallelism, free ports. */

const t0 = Date.now();

/** Logs a line to stderr with the seconds since the bench started. */
export function log(msg: string): void {
  process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Median of the finite numbers of `xs`; `undefined` when there are none. */
export function median(xs: (number | undefined | null)[]): number | undefined {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/** A TCP port free on 127.0.0.1 right now (the tests' helper). */
export { freePort } from '../../test/helpers/processes.js';

/** Polls `fn` every `intervalMs` until it returns a value other than undefined/false, or throws on timeout. */
export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  what: string,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${lastErr ? ` (last error: ${String(lastErr)})` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Rounds to `d` decimals (keeps JSON and tables short). */
export function round(x: number | undefined, d = 2): number | undefined {
  if (x === undefined || !Number.isFinite(x)) return undefined;
  const f = 10 ** d;
  return Math.round(x * f) / f;
}
