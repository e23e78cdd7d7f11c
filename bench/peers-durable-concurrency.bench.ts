/**
 * Durable concurrency (issue 50 item 1; `npm run bench peers-durable-concurrency`): SESSIONS sessions of STEPS steps run at once, each
 * checkpointed after every step, as a server runs a hundred chats; beside the same sessions run
 * unstored, in alternate rounds, so that each row's ratio is measured side by side. The workload is
 * bench/peers-durable.bench.ts's (a ~1 KiB tool result per step). Rows:
 * - agent-machine with `SqliteSessionStore` and `FileSessionStore` ('full' durability: group commit
 *   for SQLite) and `RedisSessionStore` on a redis-server of its own with AOF `appendfsync always`
 *   (unstored: the same agent without a store);
 * - LangGraph.js (LangChain `createAgent`) with `SqliteSaver` (unstored: no checkpointer);
 * - the AI SDK's `generateText` with `onStepFinish` writing the conversation as JSON to a
 *   better-sqlite3 row (WAL, synchronous = FULL), one statement per step (unstored: no write).
 * Columns: steps/s (all sessions' steps over the round's wall time, the median round), the ratio
 * to the same sessions unstored, MB written per round (write() bytes of this process from
 * /proc/self/io; for Redis, those of the redis-server process, its AOF), and the p99 step time
 * (between two model calls of a session: the step, its checkpoint, and the wait for the others).
 * DURABLE_SESSIONS (100), DURABLE_STEPS (20), DURABLE_ROUNDS (3) change the workload; DURABLE_ONLY=a,b
 * keeps the rows whose name contains one of them (`DURABLE_SESSIONS=1 DURABLE_ONLY=Sqlite`: one
 * session's step).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { generateText, isStepCount, tool } from 'ai';
import Database from 'better-sqlite3';
import { createAgent as createLangChainAgent, tool as langChainTool } from 'langchain';
import { z } from 'zod';
import { RedisSessionStore } from '../src/distributed/redis-session-store';
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
import { median, now, printTable } from './harness';
import { scriptedMockModel } from './peers/ai-sdk';
import { type Counters, QUESTION } from './peers/common';
import { ScriptChatModel } from './peers/langgraph';
import { resultText } from './peers-durable.bench';
import { redisServerPath, startRedis } from './redis-process';

const SESSIONS = Number(process.env.DURABLE_SESSIONS ?? 100);
const STEPS = Number(process.env.DURABLE_STEPS ?? 20);
const ROUNDS = Number(process.env.DURABLE_ROUNDS ?? 3);
const ONLY = (process.env.DURABLE_ONLY ?? '').split(',').filter(Boolean);

/** A process's write() bytes so far (Linux). */
function writtenBytes(pid: number | 'self' = 'self'): number {
  return Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
}

/** The model-call times of one session: the gaps between them are its steps. */
class StepClock {
  readonly times: number[] = [];
  tick(): void {
    this.times.push(now());
  }
}

/** One round: SESSIONS sessions at once, each with its own clock; throws unless each made STEPS steps. */
type Round = (round: string, clocks: readonly StepClock[]) => Promise<void>;

interface Peer {
  readonly name: string;
  /** Builds the stored and the unstored runner (in `dir`); `close` ends both. */
  setup(
    dir: string,
  ): Promise<{ stored: Round; unstored: Round; written?: () => number; close(): Promise<void> }>;
}

function check(peer: string, got: number): void {
  if (got !== STEPS) throw new Error(`${peer}: a ${STEPS}-step session recorded ${got} steps`);
}

function agentMachineRound(name: string, store: SessionStore | undefined): Round {
  const echo = defineTool({
    description: 'Look something up',
    inputSchema: z.object({ n: z.number() }),
    execute: ({ n }) => resultText(n),
  });
  return async (round, clocks) => {
    await Promise.all(
      clocks.map(async (clock, i) => {
        const agent = createAgent({
          ...(store && { store }),
          driver: scriptedDriver([
            (state) => {
              clock.tick();
              return state.stepCount() < STEPS - 1
                ? {
                    toolCalls: [
                      { name: 'echo', args: { n: state.stepCount() }, id: `call-${state.stepCount()}` },
                    ],
                  }
                : { text: 'done' };
            },
          ]),
          tools: { echo },
          budget: ExecutionBudget.unlimited(),
        });
        const question = AgentState.empty().withUserMessage(QUESTION);
        const state = await agent.execute(question, store ? { sessionId: `${round}-${i}` } : {});
        check(name, state.stepCount());
      }),
    );
  };
}

function agentMachine(name: string, open: (dir: string) => Promise<SessionStore>, extra = ''): Peer {
  return {
    name: `agent-machine + ${name}${extra}`,
    async setup(dir) {
      const store = await open(dir);
      return {
        stored: agentMachineRound(name, store),
        unstored: agentMachineRound(name, undefined),
        close: () => store.close?.() ?? Promise.resolve(),
      };
    },
  };
}

function redisPeer(): Peer | null {
  const binary = redisServerPath();
  if (!binary) return null;
  let stop: () => Promise<void> = async () => {};
  let pid = 0;
  const peer = agentMachine(
    'RedisSessionStore',
    async () => {
      const redis = await startRedis(binary, ['--appendonly', 'yes', '--appendfsync', 'always']);
      ({ stop, pid } = redis);
      return new RedisSessionStore({ connection: { host: '127.0.0.1', port: redis.port }, prefix: 'bench:' });
    },
    ' (AOF, appendfsync always)',
  );
  return {
    name: peer.name,
    async setup(dir) {
      const cell = await peer.setup(dir);
      return {
        ...cell,
        written: () => writtenBytes(pid),
        close: async () => {
          await cell.close();
          await stop();
        },
      };
    },
  };
}

function langGraphRound(checkpointer: SqliteSaver | undefined): Round {
  const echo = langChainTool(async ({ n }: { n: number }) => resultText(n), {
    name: 'echo',
    description: 'Look something up',
    schema: z.object({ n: z.number() }),
  });
  return async (round, clocks) => {
    await Promise.all(
      clocks.map(async (clock, i) => {
        const model = new ScriptChatModel(STEPS, { modelCalls: 0, toolCalls: 0 });
        const generate = model._generate.bind(model);
        model._generate = (messages) => {
          clock.tick();
          return generate(messages);
        };
        const agent = createLangChainAgent({ model, tools: [echo], ...(checkpointer && { checkpointer }) });
        const result = await agent.invoke(
          { messages: [{ role: 'user', content: QUESTION }] },
          { configurable: { thread_id: `${round}-${i}` }, recursionLimit: 2 * STEPS + 10 },
        );
        check('LangGraph', result.messages.filter((m) => m.getType() === 'ai').length);
      }),
    );
  };
}

const langGraph: Peer = {
  name: 'LangGraph createAgent + SqliteSaver',
  async setup(dir) {
    const checkpointer = SqliteSaver.fromConnString(join(dir, 'langgraph.db'));
    return {
      stored: langGraphRound(checkpointer),
      unstored: langGraphRound(undefined),
      close: async () => {},
    };
  },
};

function aiSdkRound(db: Database.Database | null): Round {
  const upsert = db?.prepare(
    'INSERT INTO chats (id, messages) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET messages = excluded.messages',
  );
  const echo = tool({
    description: 'Look something up',
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => resultText(n),
  });
  return async (round, clocks) => {
    await Promise.all(
      clocks.map(async (clock, i) => {
        const counters: Counters = { modelCalls: 0, toolCalls: 0 };
        const model = scriptedMockModel(STEPS, counters);
        const generate = model.doGenerate.bind(model);
        model.doGenerate = (options) => {
          clock.tick();
          return generate(options);
        };
        const id = `${round}-${i}`;
        const question = { role: 'user' as const, content: QUESTION };
        const conversation: unknown[] = [question];
        const result = await generateText({
          model,
          tools: { echo },
          messages: [question],
          stopWhen: isStepCount(STEPS),
          onStepFinish: ({ response }) => {
            if (!upsert) return;
            conversation.push(...response.messages);
            upsert.run(id, JSON.stringify(conversation));
          },
        });
        check('AI SDK', result.steps.length);
      }),
    );
  };
}

const aiSdk: Peer = {
  name: 'AI SDK generateText + onStepFinish row',
  async setup(dir) {
    const db = new Database(join(dir, 'ai-sdk.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS chats (id TEXT PRIMARY KEY, messages TEXT NOT NULL)');
    return {
      stored: aiSdkRound(db),
      unstored: aiSdkRound(null),
      close: async () => {
        db.close();
      },
    };
  },
};

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN;
}

/** Runs one round; its steps/s and the gaps between each session's model calls. */
async function timeRound(run: Round, round: string): Promise<{ stepsPerSecond: number; gaps: number[] }> {
  const clocks = Array.from({ length: SESSIONS }, () => new StepClock());
  const start = now();
  await run(round, clocks);
  const seconds = (now() - start) / 1000;
  const gaps = clocks.flatMap((c) => c.times.slice(1).map((t, k) => t - (c.times[k] as number)));
  return { stepsPerSecond: (SESSIONS * STEPS) / seconds, gaps };
}

export default async function peersDurableConcurrency(): Promise<void> {
  const peers = [
    agentMachine('SqliteSessionStore', async (dir) => new SqliteSessionStore(join(dir, 'agent-machine.db'))),
    agentMachine('FileSessionStore', async (dir) => new FileSessionStore(join(dir, 'sessions'))),
    redisPeer(),
    langGraph,
    aiSdk,
  ]
    .filter((p): p is Peer => p !== null)
    .filter((p) => ONLY.length === 0 || ONLY.some((name) => p.name.includes(name)));
  const rows: Record<string, string | number>[] = [];
  for (const peer of peers) {
    const dir = mkdtempSync(join(tmpdir(), 'durable-concurrency-'));
    try {
      const cell = await peer.setup(dir);
      const written = cell.written ?? (() => writtenBytes());
      await timeRound(cell.unstored, 'warm-up-unstored');
      await timeRound(cell.stored, 'warm-up');
      const stored: number[] = [];
      const unstored: number[] = [];
      const gaps: number[] = [];
      const unstoredGaps: number[] = [];
      let bytes = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const plain = await timeRound(cell.unstored, `plain-${r}`);
        unstored.push(plain.stepsPerSecond);
        unstoredGaps.push(...plain.gaps);
        const before = written();
        const durable = await timeRound(cell.stored, `round-${r}`);
        bytes += written() - before;
        stored.push(durable.stepsPerSecond);
        gaps.push(...durable.gaps);
      }
      await cell.close();
      rows.push({
        library: peer.name,
        'steps/s': median(stored),
        'unstored steps/s': median(unstored),
        'x unstored': median(stored) / median(unstored),
        'MB written/round': bytes / ROUNDS / 1e6,
        'p99 step ms': p99(gaps),
        'p99 unstored ms': p99(unstoredGaps),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  printTable(
    `Durable concurrency: ${SESSIONS} sessions of ${STEPS} steps at once, a checkpoint after every step, beside the same sessions unstored (median of ${ROUNDS} rounds; x unstored: the ratio of the two)`,
    rows,
  );
}
