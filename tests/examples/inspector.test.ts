import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readTrace } from '../../src/inspect/trace-reader';
import { runExample } from './run-example';

describe('examples/inspector.ts', () => {
  it('streams the run to a local WebSocket inspector and writes a trace and a page', async () => {
    const run = await runExample('examples/inspector.ts');
    expect(run.code, run.stderr).toBe(0);
    const received = /the local receiver got (\d+) inspection events/.exec(run.stdout);
    expect(Number(received?.[1])).toBeGreaterThan(10);
    expect(existsSync('test-output/example-run.html')).toBe(true);
    const trace = readTrace(readFileSync('test-output/example-trace.json', 'utf8'));
    expect(trace.entries.length).toBeGreaterThan(10);
  }, 60_000);
});
