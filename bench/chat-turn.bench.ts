/**
 * A chat turn's overhead, side by side: `createChatHandler` with a `SqliteSessionStore` against
 * the AI SDK's own chat route (`streamText` + `toUIMessageStreamResponse`, the messages saved in
 * `onFinish` to a SQLite table), the same mock model streaming 50 text deltas behind both
 * (bench/chat-turn/server.ts says exactly what each route does). Both are served by loopback
 * node:http servers in a child process and driven from this process by real `fetch` POSTs of the
 * chat transport's body (the chat id and the new user message), each response read to its end.
 *
 * Per turn: the time from the POST to the model's `doStream` call, and from the model handing out
 * its last delta to the end of the response at the client (both clocks CLOCK_MONOTONIC); per
 * round: whole turns per second, at 1 chat (turns in a row) and at 50 chats at once (each chat's
 * turns in a row, the chats concurrent). Each chat is new in its round and grows turn by turn
 * (every route loads and saves the whole conversation: each turn checks that the model's prompt
 * held every earlier turn, and the run that the model was called once a turn, so a route that
 * skips work cannot look fast). Also the server process's CPU time per
 * turn (rounds run one route at a time, so a round's CPU is its route's): on a loaded machine the
 * latencies wait for a core as much as for the route, CPU time does not. Rounds alternate the
 * routes (order rotating), medians over the rounds; the ratio row is above 1 where ours is better
 * (turns/s ours over theirs; times theirs over ours).
 *
 * `CHAT_TURN_ROUNDS` (default 5) rounds per row; `CHAT_TURN_DURABILITY=process` (default `full`); `CHAT_TURN_PROFILE=<dir>` runs the server process
 * with `--cpu-prof` into that folder (one profile for the whole run; use `CHAT_TURN_ONLY=1` or
 * `=50` to measure one row).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median, printTable } from './harness';

const ROUNDS = Number(process.env.CHAT_TURN_ROUNDS ?? 5);
const ROWS = [
  { chats: 1, turns: 20 },
  { chats: 50, turns: 4 },
].filter((row) => !process.env.CHAT_TURN_ONLY || Number(process.env.CHAT_TURN_ONLY) === row.chats);
const ROUTES = ['agent-machine', 'ai-sdk'] as const;
/** `CHAT_TURN_DURABILITY=process`: both sides flush less (the store's `'process'`, `synchronous = NORMAL`). */
const DURABILITY = process.env.CHAT_TURN_DURABILITY ?? 'full';
type Route = (typeof ROUTES)[number];

interface TurnTimes {
  postToModelMs: number;
  lastDeltaToEndMs: number;
  turnMs: number;
}

const hr = () => process.hrtime.bigint();
const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

async function startServer(dir: string): Promise<{ child: ChildProcess; ports: Record<Route, number> }> {
  const here = dirname(fileURLToPath(import.meta.url));
  const profile = process.env.CHAT_TURN_PROFILE;
  const args = [
    ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []),
    '--import',
    'tsx',
    join(here, 'chat-turn', 'server.ts'),
    dir,
    DURABILITY,
  ];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the chat-turn server exited (${code}) before listening`)));
  });
  return { child, ports: JSON.parse(first) as Record<Route, number> };
}

async function turn(port: number, chatId: string, n: number): Promise<TurnTimes> {
  const body = JSON.stringify({
    id: chatId,
    trigger: 'submit-message',
    messages: [{ id: `${chatId}-u${n}`, role: 'user', parts: [{ type: 'text', text: `question ${n}` }] }],
  });
  const start = hr();
  const response = await fetch(`http://127.0.0.1:${port}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  const end = hr();
  if (response.status !== 200) throw new Error(`${chatId}: ${response.status} ${text}`);
  const [, calledAt, promptLength] = /@s(\d+):(\d+)@/.exec(text) ?? [];
  const lastAt = /@e(\d+)@/.exec(text)?.[1];
  if (!calledAt || !lastAt || !text.includes('"type":"finish"')) {
    throw new Error(`${chatId}: the answer lacks the model's deltas or its finish: ${text.slice(-300)}`);
  }
  // both routes load the conversation and save the answer: turn n's prompt holds the n turns before it
  if (Number(promptLength) !== 2 * n + 1) {
    throw new Error(
      `${chatId}: turn ${n} prompted the model with ${promptLength} messages, not ${2 * n + 1}`,
    );
  }
  return {
    postToModelMs: ms(start, BigInt(calledAt)),
    lastDeltaToEndMs: ms(BigInt(lastAt), end),
    turnMs: ms(start, end),
  };
}

/** One round: `chats` new chats at once, each `turns` turns in a row. */
async function round(port: number, tag: string, chats: number, turns: number) {
  const times: TurnTimes[] = [];
  const cpuBefore = await serverCpu(port);
  const start = hr();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      for (let n = 0; n < turns; n++) times.push(await turn(port, `${tag}-c${c}`, n));
    }),
  );
  const wallMs = ms(start, hr());
  const cpuUs = (await serverCpu(port)) - cpuBefore;
  return {
    serverCpuUsPerTurn: cpuUs / (chats * turns),
    turnsPerSecond: (chats * turns * 1000) / wallMs,
    postToModelMs: median(times.map((t) => t.postToModelMs)),
    lastDeltaToEndMs: median(times.map((t) => t.lastDeltaToEndMs)),
    turnMs: median(times.map((t) => t.turnMs)),
  };
}

async function modelCalls(port: number): Promise<number> {
  return Number(await (await fetch(`http://127.0.0.1:${port}/calls`)).text());
}

/** The server process's CPU time (µs): rounds run one route at a time, so a round's difference is that route's. */
async function serverCpu(port: number): Promise<number> {
  return Number(await (await fetch(`http://127.0.0.1:${port}/cpu`)).text());
}

export default async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-turn-'));
  const { child, ports } = await startServer(dir);
  const expectedCalls: Record<Route, number> = { 'agent-machine': 0, 'ai-sdk': 0 };
  try {
    const table: Record<string, string | number>[] = [];
    for (const { chats, turns } of ROWS) {
      const rounds: Record<Route, Awaited<ReturnType<typeof round>>[]> = {
        'agent-machine': [],
        'ai-sdk': [],
      };
      for (let r = -1; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? ROUTES : [...ROUTES].reverse();
        for (const route of order) {
          const result = await round(ports[route], `${route}-${chats}-${r + 1}`, chats, turns);
          expectedCalls[route] += chats * turns;
          if (r >= 0) rounds[route].push(result); // round -1 warms up
        }
      }
      const med = (route: Route, key: keyof Awaited<ReturnType<typeof round>>) =>
        median(rounds[route].map((x) => x[key]));
      for (const route of ROUTES) {
        table.push({
          chats,
          route,
          'turns/s': med(route, 'turnsPerSecond'),
          'POST→model ms': med(route, 'postToModelMs'),
          'last delta→end ms': med(route, 'lastDeltaToEndMs'),
          'turn ms': med(route, 'turnMs'),
          'server CPU µs/turn': med(route, 'serverCpuUsPerTurn'),
        });
      }
      const ours = (key: keyof Awaited<ReturnType<typeof round>>) => med('agent-machine', key);
      const theirs = (key: keyof Awaited<ReturnType<typeof round>>) => med('ai-sdk', key);
      table.push({
        chats,
        route: 'ratio (>1: ours better)',
        'turns/s': ours('turnsPerSecond') / theirs('turnsPerSecond'),
        'POST→model ms': theirs('postToModelMs') / ours('postToModelMs'),
        'last delta→end ms': theirs('lastDeltaToEndMs') / ours('lastDeltaToEndMs'),
        'turn ms': theirs('turnMs') / ours('turnMs'),
        'server CPU µs/turn': theirs('serverCpuUsPerTurn') / ours('serverCpuUsPerTurn'),
      });
    }
    for (const route of ROUTES) {
      const calls = await modelCalls(ports[route]);
      if (calls !== expectedCalls[route]) {
        throw new Error(`${route}: the model was called ${calls} times for ${expectedCalls[route]} turns`);
      }
    }
    printTable(
      `Chat turns over loopback HTTP, 50 streamed deltas a turn, SQLite on both sides (durability ${DURABILITY}; medians of ${ROUNDS} ` +
        'rounds; 1 chat: 20 turns in a row a round; 50 chats: 4 turns each, the chats at once); ratio: ' +
        'turns/s ours over theirs, times and CPU theirs over ours',
      table,
    );
  } finally {
    child.stdin?.end();
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
