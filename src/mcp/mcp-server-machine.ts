/**
 * The lifecycle of one MCP server an agent uses, as a statechart: started at first use, `ready`
 * while its connection lives, `down` after it died (restarted by the next call, after a backoff
 * that doubles with each restart in a row), `failed` once restarts in a row run out, `closed` by
 * `agent.close()`. The connection itself is made by the `connect` actor, provided by the
 * supervisor (SupervisedMcpServer).
 *
 * idle -use-> starting -> ready -exited-> down -use-> restarting -(backoff)-> starting
 *   starting fails -> restarting | failed;   any -close-> closing -> closed
 */
import { assign, fromPromise, setup } from 'xstate';
import type { McpConnection } from './mcp-connection';

export interface McpServerMachineInput {
  readonly name: string;
  readonly maxRestarts: number;
  readonly restartDelayMs: number;
}

export interface McpServerMachineContext extends McpServerMachineInput {
  readonly connection: McpConnection | null;
  /** Restarts in a row: reset by a successful call. */
  readonly restarts: number;
  /** Why the server last went down or failed to start. */
  readonly error: Error | null;
  /** The last attempt to start it failed (as opposed to: it died after it started). */
  readonly startFailed: boolean;
}

export type McpServerMachineEvent =
  | { type: 'use' }
  | { type: 'exited'; connection: McpConnection; error: Error | null }
  | { type: 'call.succeeded' }
  | { type: 'close' };

const MAX_RESTART_DELAY_MS = 30_000;

export const mcpServerMachine = setup({
  types: {
    context: {} as McpServerMachineContext,
    events: {} as McpServerMachineEvent,
    input: {} as McpServerMachineInput,
  },
  actors: {
    connect: fromPromise<McpConnection, { name: string }>(async () => {
      throw new Error("The 'connect' actor is not provided: use SupervisedMcpServer");
    }),
    disconnect: fromPromise<void, { connection: McpConnection | null }>(async ({ input }) => {
      await input.connection?.close();
    }),
  },
  delays: {
    restartDelay: ({ context }) =>
      Math.min(context.restartDelayMs * 2 ** Math.max(0, context.restarts - 1), MAX_RESTART_DELAY_MS),
  },
  guards: {
    canRestart: ({ context }) => context.restarts < context.maxRestarts,
    /** An event about the connection in use, not an older one. */
    isCurrent: ({ context, event }) => 'connection' in event && event.connection === context.connection,
  },
  actions: {
    keepConnection: assign(({ event }) => ({
      connection: (event as unknown as { output: McpConnection }).output,
      error: null,
      startFailed: false,
    })),
    keepStartError: assign({
      error: ({ event }) => asError((event as { error?: unknown }).error),
      startFailed: true,
    }),
    dropConnection: assign({
      connection: null,
      error: ({ event }) => (event.type === 'exited' ? event.error : null),
    }),
    countRestart: assign({ restarts: ({ context }) => context.restarts + 1 }),
    resetRestarts: assign({ restarts: 0 }),
  },
}).createMachine({
  id: 'mcpServer',
  context: ({ input }) => ({ ...input, connection: null, restarts: 0, error: null, startFailed: false }),
  initial: 'idle',
  on: { close: '.closing' },
  states: {
    idle: { on: { use: 'starting' } },
    starting: {
      invoke: {
        src: 'connect',
        input: ({ context }) => ({ name: context.name }),
        onDone: { target: 'ready', actions: 'keepConnection' },
        onError: [
          { guard: 'canRestart', target: 'restarting', actions: 'keepStartError' },
          { target: 'failed', actions: 'keepStartError' },
        ],
      },
    },
    ready: {
      on: {
        exited: { guard: 'isCurrent', target: 'down', actions: 'dropConnection' },
        'call.succeeded': { actions: 'resetRestarts' },
      },
    },
    down: {
      on: {
        use: [{ guard: 'canRestart', target: 'restarting' }, { target: 'failed' }],
      },
    },
    restarting: {
      entry: 'countRestart',
      after: { restartDelay: 'starting' },
    },
    failed: {},
    closing: {
      on: { close: {} },
      invoke: {
        src: 'disconnect',
        input: ({ context }) => ({ connection: context.connection }),
        onDone: { target: 'closed', actions: assign({ connection: null }) },
        onError: {
          target: 'closed',
          actions: assign({ connection: null, error: ({ event }) => asError(event.error) }),
        },
      },
    },
    closed: { type: 'final' },
  },
});

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
