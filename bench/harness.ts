/** Small helpers shared by the benchmarks: timing, medians, heap and table printing. */

export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Runs `fn` `warmup` times, then `runs` times, and returns the median duration in ms. */
export async function measure(fn: () => unknown, { runs = 5, warmup = 2 } = {}): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = now();
    await fn();
    times.push(now() - start);
  }
  return median(times);
}

export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Heap growth in MiB while `fn` runs and its result is still referenced. */
export async function heapGrowth<T>(fn: () => Promise<T> | T): Promise<{ result: T; mib: number }> {
  await settleHeap();
  const before = process.memoryUsage().heapUsed;
  const result = await fn();
  await settleHeap();
  const mib = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  return { result, mib };
}

/**
 * Full GCs with turns of the event loop between them: one GC leaves what weak references, weak
 * maps and finalizers release only afterwards, which would make a later reading look smaller.
 */
async function settleHeap(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0] as object);
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? format(v) : (v ?? ''));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(cell(r[c])).length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(line(columns));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(columns.map((c) => String(cell(row[c])))));
}

function format(value: number): string {
  if (Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}
