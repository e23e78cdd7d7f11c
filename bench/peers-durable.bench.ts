/**
 * Durable runs side by side (issue 38): the peers workload with a checkpoint after every step, as an
 * app that must survive a crash runs it. A scripted model asks for one `echo` call per step for
 * N - 1 steps and answers on step N; `echo` returns a different ~1 KiB text each step. Rows:
 * - agent-machine with `SqliteSessionStore` and with `FileSessionStore` (`execute(state, { sessionId })`:
 *   the runtime saves after every step);
 * - LangGraph.js (LangChain `createAgent`) with `SqliteSaver` from
 *   `@langchain/langgraph-checkpoint-sqlite` (its default durability: a checkpoint per super-step);
 * - the AI SDK's `generateText` with what its users write by hand: `onStepFinish` writing the
 *   conversation so far (`response.messages`) as JSON to a better-sqlite3 row, with the same pragmas
 *   as agent-machine's SQLite store (WAL, synchronous = FULL).
 * Columns: µs per step (the median run's time over N; runs in a row, each a new session), MB
 * written per run (the process's write() bytes from /proc/self/io, WAL and fsyncs included) and
 * the time to load the final session by a fresh store (median of 5): `store.load(id)`, the
 * checkpointer's `getTuple`, and the row read and `JSON.parse`d.
 * `DURABLE_STEPS=10,100` limits the run lengths (default 10, 100 and 1,000).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { generateText, isStepCount, tool } from 'ai';
import Database from 'better-sqlite3';
import { createAgent as createLangChainAgent, tool as langChainTool } from 'langchain';
import { z } from 'zod';
import {
  AgentState,
  createAgent,
  defineTool,
  ExecutionBudget,
  FileSessionStore,
  type SessionStore,
  SqliteSessionStore,
  scriptedDriver,
} from '../src/index';
import { collectGarbage, median, now, printTable } from './harness';
import { scriptedMockModel } from './peers/ai-sdk';
import { type Counters, QUESTION, versionOf } from './peers/common';
import { ScriptChatModel } from './peers/langgraph';

const RESULT_BYTES = 1024;
const STEPS = (process.env.DURABLE_STEPS ?? '10,100,1000').split(',').map(Number);
/** Runs per cell: enough for a median at short lengths, one at 1,000 steps (LangGraph takes ~40 s). */
const runsFor = (steps: number) => (steps <= 10 ? 15 : steps <= 100 ? 5 : 1);

/** A different ~1 KiB text per step, so that no two results are alike. */
export function resultText(n: number): string {
  let text = `result of step ${n}: `;
  let seed = n * 2654435761;
  while (text.length < RESULT_BYTES) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    text += `${(seed % 100000).toString(36)} `;
  }
  return text.slice(0, RESULT_BYTES);
}

/** Bytes this process has passed to write() so far (Linux). */
function writtenBytes(): number {
  return Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);
}

interface DurableCell {
  /** One run of N steps in a new session `id`; throws unless it made N steps. */
  run(id: string): Promise<void>;
  /** Loads session `id` by a fresh store and checks it holds N steps. */
  load(id: string): Promise<void>;
  close(): Promise<void> | void;
}

interface DurablePeer {
  readonly name: string;
  readonly version: string;
  setup(dir: string, steps: number): DurableCell;
}

function check(peer: string, steps: number, got: number): void {
  if (got !== steps) throw new Error(`${peer}: a ${steps}-step run recorded ${got} steps`);
}

function agentMachine(name: string, open: (dir: string) => SessionStore): DurablePeer {
  return {
    name: `agent-machine + ${name}`,
    version: 'agent-machine (this repo)',
    setup(dir, steps) {
      const store = open(dir);
      const echo = defineTool({
        description: 'Look something up',
        inputSchema: z.object({ n: z.number() }),
        execute: ({ n }) => resultText(n),
      });
      const agent = createAgent({
        store,
        driver: scriptedDriver([
          (state) =>
            state.stepCount() < steps - 1
              ? {
                  toolCalls: [
                    { name: 'echo', args: { n: state.stepCount() }, id: `call-${state.stepCount()}` },
                  ],
                }
              : { text: 'done' },
        ]),
        tools: { echo },
        budget: ExecutionBudget.unlimited(),
      });
      return {
        async run(id) {
          const state = await agent.execute(AgentState.empty().withUserMessage(QUESTION), { sessionId: id });
          check(name, steps, state.stepCount());
        },
        async load(id) {
          const fresh = open(dir);
          const loaded = await fresh.load(id);
          await fresh.close();
          check(name, steps, loaded?.state.stepCount() ?? 0);
        },
        close: () => store.close(),
      };
    },
  };
}

const langGraph: DurablePeer = {
  name: 'LangGraph createAgent + SqliteSaver',
  version: `${versionOf('@langchain/langgraph')}, ${versionOf('@langchain/langgraph-checkpoint-sqlite')}`,
  setup(dir, steps) {
    const file = join(dir, 'langgraph.db');
    const counters: Counters = { modelCalls: 0, toolCalls: 0 };
    const checkpointer = SqliteSaver.fromConnString(file);
    const echo = langChainTool(async ({ n }: { n: number }) => resultText(n), {
      name: 'echo',
      description: 'Look something up',
      schema: z.object({ n: z.number() }),
    });
    const agent = createLangChainAgent({
      model: new ScriptChatModel(steps, counters),
      tools: [echo],
      checkpointer,
    });
    const recursionLimit = 2 * steps + 10;
    return {
      async run(id) {
        const result = await agent.invoke(
          { messages: [{ role: 'user', content: QUESTION }] },
          { configurable: { thread_id: id }, recursionLimit },
        );
        check('LangGraph', steps, result.messages.filter((m) => m.getType() === 'ai').length);
      },
      async load(id) {
        const fresh = SqliteSaver.fromConnString(file);
        const tuple = await fresh.getTuple({ configurable: { thread_id: id } });
        const values = tuple?.checkpoint.channel_values as { messages?: { getType(): string }[] } | undefined;
        const messages = values?.messages ?? [];
        check('LangGraph', steps, messages.filter((m) => m.getType() === 'ai').length);
      },
      close: () => {},
    };
  },
};

const aiSdk: DurablePeer = {
  name: 'AI SDK generateText + onStepFinish row',
  version: `${versionOf('ai')}, ${versionOf('better-sqlite3')}`,
  setup(dir, steps) {
    const file = join(dir, 'ai-sdk.db');
    const open = () => {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('CREATE TABLE IF NOT EXISTS chats (id TEXT PRIMARY KEY, messages TEXT NOT NULL)');
      return db;
    };
    const db = open();
    const upsert = db.prepare(
      'INSERT INTO chats (id, messages) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET messages = excluded.messages',
    );
    const model = scriptedMockModel(steps, { modelCalls: 0, toolCalls: 0 });
    const echo = tool({
      description: 'Look something up',
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => resultText(n),
    });
    const stopWhen = isStepCount(steps);
    return {
      async run(id) {
        const question = { role: 'user' as const, content: QUESTION };
        // A step's `response.messages` are that step's own (AI SDK 7): the conversation is kept here.
        const conversation: unknown[] = [question];
        const result = await generateText({
          model,
          tools: { echo },
          messages: [question],
          stopWhen,
          onStepFinish: ({ response }) => {
            conversation.push(...response.messages);
            upsert.run(id, JSON.stringify(conversation));
          },
        });
        check('AI SDK', steps, result.steps.length);
      },
      async load(id) {
        const fresh = open();
        const row = fresh.prepare('SELECT messages FROM chats WHERE id = ?').get(id) as { messages: string };
        const messages = JSON.parse(row.messages) as { role: string }[];
        fresh.close();
        check('AI SDK', steps, messages.filter((m) => m.role === 'assistant').length);
      },
      close: () => {
        db.close();
      },
    };
  },
};

const PEERS: readonly DurablePeer[] = [
  agentMachine('SqliteSessionStore', (dir) => new SqliteSessionStore(join(dir, 'agent-machine.db'))),
  agentMachine('FileSessionStore', (dir) => new FileSessionStore(join(dir, 'sessions'))),
  langGraph,
  aiSdk,
];

export default async function durablePeers(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const steps of STEPS) {
    for (const peer of PEERS) {
      const dir = mkdtempSync(join(tmpdir(), 'durable-peers-'));
      try {
        const cell = peer.setup(dir, steps);
        await cell.run('warm-up');
        const runs = runsFor(steps);
        const times: number[] = [];
        const before = writtenBytes();
        for (let i = 0; i < runs; i++) {
          const start = now();
          await cell.run(`run-${i}`);
          times.push(now() - start);
        }
        const written = (writtenBytes() - before) / runs;
        const loads: number[] = [];
        for (let i = -1; i < 5; i++) {
          collectGarbage();
          const start = now();
          await cell.load(`run-${runs - 1}`);
          if (i >= 0) loads.push(now() - start);
        }
        await cell.close();
        rows.push({
          N: steps,
          library: peer.name,
          'µs/step': (median(times) * 1000) / steps,
          'MB written/run': written / 1e6,
          'x content': written / ((steps - 1) * RESULT_BYTES),
          'ms to load': median(loads),
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  printTable(
    'Durable runs: a ~1 KiB tool result per step, a checkpoint after every step (µs per step of the median run, MB written per run, load of the final session by a fresh store)',
    rows,
  );
  console.log(`  ${PEERS.map((p) => `${p.name}: ${p.version}`).join('\n  ')}`);
}
