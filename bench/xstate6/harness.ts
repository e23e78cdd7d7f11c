/**
 * Interleaved sampling for the XState 5 / 6 comparison: each round takes one sample of every
 * variant, in a rotating order, so load from other processes hits them alike. A sample repeats the
 * run until it takes about SAMPLE_MS of CPU time; it records this process's CPU time
 * (`process.cpuUsage()`, user + system) and the wall time per run. Figures are medians over the rounds.
 */
export interface Variant {
  readonly name: string;
  /** One run; resolves when the run is over (or returns at once for synchronous work). */
  readonly run: () => unknown;
}

export interface Result {
  readonly name: string;
  readonly wallUs: number;
  readonly cpuUs: number;
  readonly runsPerSample: number;
}

const SAMPLE_MS = Number(process.env.SAMPLE_MS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 400);

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function repeat(run: () => unknown, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const result = run();
    if (result instanceof Promise) await result;
  }
}

/**
 * Runs the variant until WARMUP_MS of CPU time passed, and finds how many runs make a sample of
 * about SAMPLE_MS of CPU time (CPU, not wall: on a loaded machine wall time counts the waits).
 */
async function calibrate(variant: Variant): Promise<number> {
  const start = cpuUs();
  let runs = 0;
  while (runs < 2 || cpuUs() - start < WARMUP_MS * 1000) {
    await repeat(variant.run, 1);
    runs++;
  }
  const perRunUs = (cpuUs() - start) / runs;
  return Math.max(1, Math.round((SAMPLE_MS * 1000) / perRunUs));
}

/**
 * Before the first table cell: runs the variants in turn until each has had `ms` of CPU time, so
 * that the first cell (N = 1, the most sensitive) is not measured while the JIT still compiles.
 */
export async function warmUp(variants: readonly Variant[], ms = 1_500): Promise<void> {
  const spent = variants.map(() => 0);
  while (spent.some((t) => t < ms * 1000)) {
    for (let i = 0; i < variants.length; i++) {
      const c0 = cpuUs();
      await repeat(variants[i]!.run, 10);
      spent[i]! += cpuUs() - c0;
    }
  }
}

export async function compare(variants: readonly Variant[]): Promise<Result[]> {
  const repeats: number[] = [];
  for (const variant of variants) repeats.push(await calibrate(variant));
  const wall: number[][] = variants.map(() => []);
  const cpu: number[][] = variants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const i = (round + k) % variants.length;
      const variant = variants[i]!;
      const runs = repeats[i]!;
      const c0 = cpuUs();
      const t0 = nowMs();
      await repeat(variant.run, runs);
      const t1 = nowMs();
      const c1 = cpuUs();
      wall[i]!.push(((t1 - t0) * 1000) / runs);
      cpu[i]!.push((c1 - c0) / runs);
    }
  }
  return variants.map((variant, i) => ({
    name: variant.name,
    wallUs: median(wall[i]!),
    cpuUs: median(cpu[i]!),
    runsPerSample: repeats[i]!,
  }));
}

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  const columns = Object.keys(rows[0] ?? {});
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? format(v) : (v ?? ''));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(cell(r[c])).length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
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

/** One table row: CPU µs per run and per step for each version, and the v6 / v5 ratios (CPU, wall). */
export function versionRow(steps: number, v5: Result, v6: Result): Record<string, number> {
  return {
    N: steps,
    'v5 µs/run': v5.cpuUs,
    'v6 µs/run': v6.cpuUs,
    'v5 µs/step': v5.cpuUs / steps,
    'v6 µs/step': v6.cpuUs / steps,
    'v6/v5': v6.cpuUs / v5.cpuUs,
    'v6/v5 wall': v6.wallUs / v5.wallUs,
  };
}

/** A row for a synchronous operation: CPU µs for each version and the ratios. */
export function opRow(v5: Result, v6: Result): Record<string, number> {
  return {
    'v5 µs': v5.cpuUs,
    'v6 µs': v6.cpuUs,
    'v6/v5': v6.cpuUs / v5.cpuUs,
    'v6/v5 wall': v6.wallUs / v5.wallUs,
  };
}
