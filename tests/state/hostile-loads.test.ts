import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseAgentJob } from '../../src/distributed/index';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunView } from '../../src/inspect/run-viewer';
import { readTrace, traceStates } from '../../src/inspect/trace-reader';
import { recordTrace } from '../../src/inspect/trace-recorder';
import { InvalidTraceError } from '../../src/inspect/trace-schema';
import { CorruptSessionError } from '../../src/persistence/errors';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { encodeSessionDocument } from '../../src/persistence/session-document';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { Message } from '../../src/state/message';
import { defineTool } from '../../src/tools/define-tool';

const ROOT = resolve(import.meta.dirname, '../..');
const hostileJson = '{"__proto__":{"admin":true},"ok":1}';
const ownProto = (value: unknown) => Object.getOwnPropertyDescriptor(value, '__proto__')?.value;
const deepText = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-hostile-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A finished run whose tool returned third-party JSON with an own `__proto__` key, recorded as a trace. */
async function protoRun() {
  const fetchTool = defineTool({
    description: 'Returns third-party JSON',
    inputSchema: z.object({}).passthrough(),
    execute: async () => JSON.parse(hostileJson),
  });
  const agent = createAgent({
    driver: scriptedDriver([
      { toolCalls: [{ id: 'f1', name: 'fetch', args: JSON.parse(hostileJson) }] },
      { text: 'done' },
    ]),
    tools: { fetch: fetchTool },
  });
  const recorder = recordTrace();
  const state = await agent.execute(AgentState.empty().withUserMessage('Go'), { inspect: recorder.inspect });
  return { state, trace: recorder.toJSON() };
}

describe('an own __proto__ key in the trace and the viewer', () => {
  it('round-trips through a written trace as data', async () => {
    const { state, trace } = await protoRun();
    const [root] = traceStates(readTrace(JSON.stringify(trace)));
    const execution = root?.state.steps()[0]?.toolExecutions()[0];
    expect(ownProto(execution?.value())).toEqual({ admin: true });
    expect(ownProto(execution?.args())).toEqual({ admin: true });
    expect(root?.state.toJSON()).toEqual(state.toJSON());
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('is shown by the viewer built from the state, its JSON and the trace', async () => {
    const { state, trace } = await protoRun();
    for (const input of [state, JSON.parse(JSON.stringify(state)), readTrace(JSON.stringify(trace))]) {
      const html = renderRunView(buildRunView(input));
      expect(html).toContain('__proto__');
      expect(html).toContain('admin');
    }
  });
});

describe('section names and message keys are data', () => {
  it("a section named '__proto__' and a message's own __proto__ metadata round-trip as data", () => {
    const state = AgentState.empty()
      .withUserMessage('hi')
      .withMessages(
        [Message.of({ role: 'user', content: 'kept', metadata: JSON.parse(hostileJson) })],
        '__proto__',
      );
    const loaded = AgentState.fromJSON(JSON.parse(JSON.stringify(state.toJSON())));
    expect(loaded.context().store().sectionNames()).toEqual(['messages', '__proto__']);
    const [kept] = loaded.context().store().section('__proto__');
    expect(kept?.content).toBe('kept');
    expect(ownProto(kept?.metadata)).toEqual({ admin: true });
    expect(Object.getPrototypeOf(kept?.metadata)).toBe(Object.prototype);
    expect(JSON.stringify(loaded.toJSON())).toBe(JSON.stringify(state.toJSON()));
  });
});

describe('deep or cyclic input answers with the typed error of its loader', () => {
  it('readTrace: InvalidTraceError, never a RangeError', async () => {
    const { trace } = await protoRun();
    expect(() => readTrace(deepText(100_000))).toThrow(InvalidTraceError);
    const hash = Object.keys(trace.blobs)[0] as string;
    // Built as text: JSON.stringify itself cannot write a value this deep.
    const deepBlob = JSON.stringify(trace).replace(`"${hash}":`, `"${hash}":${deepText(10_000)},"x${hash}":`);
    expect(() => readTrace(deepBlob)).toThrow(InvalidTraceError);
    const cyclic = JSON.parse(JSON.stringify(trace));
    cyclic.blobs[hash] = { again: cyclic.blobs };
    expect(() => readTrace(cyclic)).toThrow(InvalidTraceError);
  });

  it('a session load: CorruptSessionError naming the session', async () => {
    const store = new FileSessionStore(dir);
    // a session document (the format before the journal, still loaded) holding a value 20,000 levels deep
    const document = encodeSessionDocument(1, AgentState.empty().withUserMessage('hi'));
    const deep = document.replace('"metadata":{}', `"metadata":{"x":${deepText(20_000)}}`);
    expect(deep).not.toBe(document);
    await writeFile(join(dir, 'deep.json'), deep);
    await expect(store.load('deep')).rejects.toThrow(CorruptSessionError);
    await expect(store.load('deep')).rejects.toThrow(/metadata\.x\.a\.a.*nested more than/);
    await store.close();
  });

  it('a worker job payload: INVALID_JOB_PAYLOAD', () => {
    const text = JSON.stringify(AgentState.empty().withUserMessage('hi'));
    const deep = JSON.parse(text.replace('"metadata":{}', `"metadata":{"x":${deepText(20_000)}}`));
    const cyclic = JSON.parse(text);
    cyclic.context.metadata.self = cyclic;
    for (const bad of [deep, cyclic]) {
      let error: unknown;
      try {
        parseAgentJob('execute', { agent: 'a', sessionId: 's', state: bad });
      } catch (e) {
        error = e;
      }
      expect((error as { code?: string }).code).toBe('INVALID_JOB_PAYLOAD');
    }
  });

  it('agent-machine view: exit code 1 and one line naming the problem, no stack trace', {
    timeout: 90_000,
  }, async () => {
    const path = join(dir, 'deep-state.json');
    const state = JSON.stringify(AgentState.empty().withUserMessage('hi'));
    await writeFile(path, state.replace('"metadata":{}', `"metadata":{"x":${deepText(50_000)}}`));
    const result = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile('npx', ['tsx', 'src/cli.ts', 'view', path], { cwd: ROOT }, (error, _stdout, stderr) => {
        done({
          code: error ? Number(error.code) : 0,
          stderr: stderr
            .split('\n')
            .filter((l) => !l.startsWith('npm warn'))
            .join('\n'),
        });
      });
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/nested more than \d+ levels deep/);
    expect(result.stderr).not.toMatch(/RangeError| {4}at /);
  });
});
