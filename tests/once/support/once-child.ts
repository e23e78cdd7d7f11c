/**
 * Child process of the at-most-once crash matrix: runs (or resumes, or decides) one session of the
 * payment agent until it ends, logging what happens to a log file with fsync, so the parent can count
 * effects, model calls, acknowledged saves and approval ids across the kills.
 * Usage: once-child.ts <file|sqlite|redis> <path or host:port> <session id> <log path> <seed> <unsafe|idempotent|subagent>
 * In `subagent` mode the root pays once itself and calls a `payer` subagent twice (j1 with its own
 * payment beside it, then j2), whose pay, send and sync calls are those of the other modes; calls
 * inside a subagent are named `<subagent call id>/<call id>` in the log.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { RedisSessionStore } from '../../../src/distributed/index';
import type { Driver } from '../../../src/drivers/driver';
import { scriptedDriver } from '../../../src/drivers/scripted-driver';
import { FileSessionStore } from '../../../src/persistence/file-session-store';
import type { SessionStore } from '../../../src/persistence/session-store';
import { SqliteSessionStore } from '../../../src/persistence/sqlite-session-store';
import { createAgent } from '../../../src/runtime/create-agent';
import { AgentState } from '../../../src/state/agent-state';
import type { ApprovalInput } from '../../../src/state/approval';
import { defineTool } from '../../../src/tools/define-tool';
import { decisionFor, type EffectMode, seeded } from './once-matrix';

const [kind, where, sessionId, logPath, seedText, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  EffectMode,
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
    for (const label of intentsIn(state, 'root')) log(`intent ${label}`);
    log(`ack ${state.stepCount()} ${next}`);
    return next;
  },
  delete: (id) => inner.delete(id),
  list: () => inner.list(),
  close: () => inner.close(),
};

/**
 * The steps whose model answer a save holds in an intent (`<agent>:<step>`): the root's, and those of
 * the subagents whose intents it keeps (by the subagent call's id), at any depth.
 */
function intentsIn(state: AgentState, label: string): string[] {
  const approval = state.approval();
  if (!approval) return [];
  const own = approval.started ? [`${label}:${state.stepCount() + 1}`] : [];
  return [...own, ...Object.entries(approval.children).flatMap(([id, child]) => intentsIn(child, id))];
}

/** The agent a state belongs to, as the log names it: `root`, or the subagent call's id (its task is `job <id>`). */
const agentOf = (state: AgentState) =>
  state.parentAgentId() === null
    ? 'root'
    : (state.messages().find((m) => m.role === 'user')?.content ?? '').slice(4);
/** A call as the log names it: its id, inside a subagent prefixed with the subagent call's id. */
const callName = (state: AgentState, toolCallId: string) =>
  state.parentAgentId() === null ? toolCallId : `${agentOf(state)}/${toolCallId}`;

const effect = mode === 'idempotent' ? ('idempotent' as const) : ('unsafe' as const);
/** A tool whose effect (a line in the log) happens in the middle of a short sleep. */
const effectful = (needsApproval: boolean) =>
  defineTool({
    inputSchema: z.object({ n: z.number() }),
    effect,
    needsApproval,
    execute: async (_input, { toolCallId, idempotencyKey, state }) => {
      await sleep(random() * 30);
      log(`effect ${callName(state, toolCallId)} ${idempotencyKey}`);
      await sleep(random() * 30);
      return `done ${toolCallId}`;
    },
  });
const sync = defineTool({
  inputSchema: z.object({ n: z.number() }),
  effect: 'idempotent',
  execute: async (_input, { toolCallId, idempotencyKey, state }) => {
    await sleep(random() * 20);
    log(`effect ${callName(state, toolCallId)} ${idempotencyKey}`);
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
const rootScript = scriptedDriver([
  { toolCalls: [{ id: 'j1', name: 'payer', args: { task: 'job j1' } }, call('r1', 'pay')], delayMs: 20 },
  { toolCalls: [{ id: 'j2', name: 'payer', args: { task: 'job j2' } }], delayMs: 20 },
  { text: 'all paid', delayMs: 20 },
]);
/** The model, logging each call as `model <agent>:<step>` (the root's steps alone in the other modes). */
const logged = (played: Driver): Driver => ({
  name: 'logged',
  async infer(state, context) {
    log(`model ${mode === 'subagent' ? `${agentOf(state)}:` : ''}${state.stepCount() + 1}`);
    return played.infer(state, context);
  },
});
const tools = { pay: effectful(false), send: effectful(true), sync };
/**
 * Every rejected interrupted call is a step error (TOOL_BLOCKED): with the default error policy, a
 * trial whose kills made three steps in a row end with one fails with RetryLimitReached, as it
 * should, and never finishes. The scripts are a few steps long: the policy is let through.
 */
const lenient = { maxConsecutiveErrorSteps: 20 };
const agent =
  mode === 'subagent'
    ? createAgent({
        driver: logged(rootScript),
        tools: { pay: tools.pay },
        store,
        approvalSecret: 'matrix-secret',
        errorPolicy: lenient,
        subagents: {
          agents: {
            payer: {
              description: 'Pays',
              driver: logged(script),
              tools,
              subagents: { agents: {} },
              errorPolicy: lenient,
            },
          },
        },
      })
    : createAgent({
        driver: logged(script),
        tools,
        store,
        approvalSecret: 'matrix-secret',
        errorPolicy: lenient,
      });

const options = {
  onEvent: (
    event: {
      type: string;
      toolCalls?: readonly { toolCallId: string; callPath?: readonly string[]; signature?: string }[];
    },
    source: { subagent: unknown },
  ) => {
    // the root's announcement lists the calls inside its subagents too (signed, with their callPath)
    if (event.type === 'approval.requested' && source.subagent === null)
      for (const p of event.toolCalls ?? [])
        log(`shown ${[...(p.callPath ?? []), p.toolCallId].join('/')} ${p.signature}`);
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
    const name = [...(p.callPath ?? []), p.toolCallId].join('/');
    log(`pending ${name} ${p.signature} ${p.reason}`);
    const decision = decisionFor({ toolCallId: name, reason: p.reason }, Number(seedText));
    log(`decide ${name} ${decision.type} ${p.reason}`);
    return {
      ...decision,
      toolCallId: p.toolCallId,
      callPath: p.callPath,
      signature: p.signature,
    } as ApprovalInput;
  });
  state = await agent.decide(sessionId, decisions, options as never);
}
log(`end ${state.status()} ${state.finalResponse()}`);
// a run that did not complete says why (the parent counts it unfinished)
for (const error of state.errors()) log(`error ${error.code ?? ''} ${error.message}`);
closeSync(fd);
await inner.close();
process.stdout.write('done\n');
process.exit(0);
