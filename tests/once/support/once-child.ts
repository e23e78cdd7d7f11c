/**
 * Child process of the at-most-once crash matrix: runs (or resumes, or decides) one session of the
 * payment agent until it ends, logging what happens to a log file with fsync, so the parent can count
 * effects, model calls, acknowledged saves and approval ids across the kills.
 * Usage: once-child.ts <file|sqlite|redis> <path or host:port> <session id> <log path> <seed> <unsafe|idempotent>
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { RedisSessionStore } from '../../../src/distributed/index';
import {
  AgentState,
  type ApprovalInput,
  createAgent,
  type Driver,
  defineTool,
  FileSessionStore,
  type SessionStore,
  SqliteSessionStore,
  scriptedDriver,
} from '../../../src/index';
import { decisionFor, seeded } from './once-matrix';

const [kind, where, sessionId, logPath, seedText, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  'unsafe' | 'idempotent',
];
const random = seeded(Number(seedText) + process.pid);

const fd = openSync(logPath, 'a');
/** One line of the log, on disk before the call returns. */
const log = (line: string) => {
  writeSync(fd, `${line}\n`);
  fsyncSync(fd);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function openStore(): SessionStore {
  if (kind === 'sqlite') return new SqliteSessionStore(where);
  if (kind === 'redis') {
    const [host, port] = where.split(':');
    return new RedisSessionStore({
      connection: { host: host as string, port: Number(port) },
      prefix: 'once:',
    });
  }
  return new FileSessionStore(where);
}
const inner = openStore();
/** The store, logging each acknowledged save (and each intent among them). */
const store: SessionStore = {
  load: (id) => inner.load(id),
  save: async (id, state, version) => {
    const next = await inner.save(id, state, version);
    const started = state.approval()?.started;
    if (started) log(`intent ${state.stepCount() + 1}`);
    log(`ack ${state.stepCount()} ${next}`);
    return next;
  },
  delete: (id) => inner.delete(id),
  list: () => inner.list(),
  close: () => inner.close(),
};

const effect = mode === 'unsafe' ? ('unsafe' as const) : ('idempotent' as const);
/** A tool whose effect (a line in the log) happens in the middle of a short sleep. */
const effectful = (needsApproval: boolean) =>
  defineTool({
    inputSchema: z.object({ n: z.number() }),
    effect,
    needsApproval,
    execute: async (_input, { toolCallId, idempotencyKey }) => {
      await sleep(random() * 30);
      log(`effect ${toolCallId} ${idempotencyKey}`);
      await sleep(random() * 30);
      return `done ${toolCallId}`;
    },
  });
const sync = defineTool({
  inputSchema: z.object({ n: z.number() }),
  effect: 'idempotent',
  execute: async (_input, { toolCallId, idempotencyKey }) => {
    await sleep(random() * 20);
    log(`effect ${toolCallId} ${idempotencyKey}`);
    return 'synced';
  },
});
const call = (id: string, name: string) => ({ id, name, args: { n: 1 } });
const script = scriptedDriver([
  { toolCalls: [call('p1', 'pay'), call('s1', 'sync')], delayMs: 20 },
  { toolCalls: [call('a1', 'send')], delayMs: 20 },
  { toolCalls: [call('p2', 'pay'), call('p3', 'pay')], delayMs: 20 },
  { text: 'all paid', delayMs: 20 },
]);
const driver: Driver = {
  name: 'logged',
  async infer(state, context) {
    log(`model ${state.stepCount() + 1}`);
    return script.infer(state, context);
  },
};
const agent = createAgent({
  driver,
  tools: { pay: effectful(false), send: effectful(true), sync },
  store,
  approvalSecret: 'matrix-secret',
});

const options = {
  onEvent: (event: { type: string; toolCalls?: readonly { toolCallId: string; signature?: string }[] }) => {
    if (event.type === 'approval.requested')
      for (const p of event.toolCalls ?? []) log(`shown ${p.toolCallId} ${p.signature}`);
  },
  // the chart's state, for the parent to tell where a kill landed (a pipe write is synchronous)
  inspect: (event: { type: string; actorRef: { id?: string }; snapshot?: { value?: unknown } }) => {
    if (event.type === '@xstate.snapshot' && event.snapshot?.value !== undefined)
      process.stdout.write(`state ${JSON.stringify(event.snapshot.value)}\n`);
  },
};

process.stdout.write('ready\n');
const loaded = await store.load(sessionId);
if (loaded) log(`loaded ${loaded.state.stepCount()} ${loaded.version}`);
let state = loaded
  ? await agent.resume(sessionId, options as never)
  : await agent.execute(AgentState.empty().withUserMessage('pay three times'), {
      sessionId,
      ...options,
    } as never);
while (state.pendingApprovals().length > 0) {
  const decisions: ApprovalInput[] = state.pendingApprovals().map((p) => {
    log(`pending ${p.toolCallId} ${p.signature} ${p.reason}`);
    const decision = decisionFor(p, Number(seedText));
    log(`decide ${p.toolCallId} ${decision.type} ${p.reason}`);
    return { ...decision, toolCallId: p.toolCallId, signature: p.signature } as ApprovalInput;
  });
  state = await agent.decide(sessionId, decisions, options as never);
}
log(`end ${state.status()} ${state.finalResponse()}`);
closeSync(fd);
await inner.close();
process.stdout.write('done\n');
process.exit(0);
