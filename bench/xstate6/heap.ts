/**
 * Heap per idle live agent actor (`createActor(agentLoop, { input }).start()`, resting in
 * `pending`), XState 5 against the XState 6 port, as `npm run bench memory` measures it for v5:
 * COUNT actors held at once, GC settled before and after (needs --expose-gc), three rounds each, in
 * turn.
 *
 *   node --expose-gc --import tsx heap.ts     (COUNT= to change)
 */
import * as v6 from 'xstate';
import * as v5 from 'xstate5';
import { agentLoop as agentLoop6 } from './chart6/agentLoop';
import { median, printTable } from './harness';
import { agentLoop as agentLoop5 } from './repo/machines/agentLoop';
import { AgentState } from './repo/src/index';

const COUNT = Number(process.env.COUNT ?? 2_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

async function settle(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

/** KiB of heap per actor while COUNT of them are held. */
async function perActor(make: () => { stop(): void }): Promise<number> {
  const before = await settle();
  const held = Array.from({ length: COUNT }, make);
  const after = await settle();
  for (const actor of held) actor.stop();
  return (after - before) / COUNT / 1024;
}

const input = { state: AgentState.empty().withUserMessage('go') };
const kib5: number[] = [];
const kib6: number[] = [];
for (let round = 0; round < 3; round++) {
  kib5.push(await perActor(() => v5.createActor(agentLoop5, { input }).start()));
  kib6.push(await perActor(() => v6.createActor(agentLoop6, { input } as never).start()));
}
const [a, b] = [median(kib5), median(kib6)];
printTable(`Heap per idle agent actor, ${COUNT} held (KiB, median of 3)`, [
  { 'v5 KiB': a, 'v6 KiB': b, 'v6/v5': b / a },
]);
