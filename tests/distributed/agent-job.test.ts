import { describe, expect, it } from 'vitest';
import {
  AgentJobFailedError,
  failureReason,
  InvalidJobPayloadError,
  parseAgentJob,
  parseFailureReason,
  SessionBusyError,
  UnknownAgentError,
} from '../../src/distributed/index';
import { importModule } from '../../src/distributed/redis-modules';
import { SessionNotFoundError } from '../../src/persistence/errors';
import { AgentState } from '../../src/state/agent-state';
import { AgentMachineError } from '../../src/state/errors';

describe('parseAgentJob', () => {
  it('reads execute, decide (a nested call named by callPath) and resume jobs', () => {
    const state = AgentState.empty().withUserMessage('hi');
    const execute = parseAgentJob('execute', {
      agent: 'a',
      sessionId: 's-1',
      state: state.toJSON(),
      message: 'more',
    });
    expect(execute).toMatchObject({ kind: 'execute', agent: 'a', sessionId: 's-1', message: 'more' });
    expect(execute.kind === 'execute' && execute.state?.toJSON()).toEqual(state.toJSON());
    expect(parseAgentJob('execute', { agent: 'a', sessionId: 's', message: 'x' })).toMatchObject({
      state: null,
    });
    const decision = { toolCallId: 't1', type: 'approve', callPath: ['p2'], signature: 'sig' };
    expect(parseAgentJob('decide', { agent: 'a', sessionId: 's', decisions: [decision] })).toEqual({
      kind: 'decide',
      agent: 'a',
      sessionId: 's',
      decisions: [decision],
    });
    expect(parseAgentJob('resume', { agent: 'a', sessionId: 's' })).toEqual({
      kind: 'resume',
      agent: 'a',
      sessionId: 's',
    });
  });

  it.each([
    ['run', { agent: 'a', sessionId: 's' }, 'name'],
    ['execute', null, 'data'],
    ['execute', [], 'data'],
    ['execute', { sessionId: 's', message: 'x' }, 'data.agent'],
    ['execute', { agent: 'a', sessionId: 's', message: 5 }, 'data.message'],
    ['execute', { agent: 'a', sessionId: 'a b', message: 'x' }, 'data.sessionId'],
    ['execute', { agent: 'a', sessionId: 's', state: 'text' }, 'data.state'],
    ['execute', { agent: 'a', sessionId: 's', state: { formatVersion: 99 } }, 'data.state.formatVersion'],
    ['resume', { agent: 'a', sessionId: 's', message: 'x' }, 'data'],
    [
      'decide',
      { agent: 'a', sessionId: 's', decisions: [{ toolCallId: 't1', type: 'approve', callPath: 'p1' }] },
      'data.decisions.0',
    ],
  ])('refuses %s %j with InvalidJobPayloadError at %s', (name, data, path) => {
    const error = (() => {
      try {
        parseAgentJob(name, data);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidJobPayloadError);
    expect(error).toMatchObject({ code: 'INVALID_JOB_PAYLOAD', path });
    expect((error as Error).message).toContain(`Invalid agent job at ${path}: `);
  });
});

describe('failed reasons', () => {
  it('name the error class and code, and read back', () => {
    const errors: [unknown, string | null][] = [
      [new UnknownAgentError('x', ['a']), 'UNKNOWN_AGENT'],
      [new SessionNotFoundError('s'), 'SESSION_NOT_FOUND'],
      [new SessionBusyError('s'), 'SESSION_BUSY'],
      [Object.assign(new Error('socket closed'), { code: 'ECONNRESET' }), 'ECONNRESET'],
      [new TypeError('bad'), null],
    ];
    for (const [error, code] of errors) {
      const reason = failureReason(error);
      const parsed = parseFailureReason(reason);
      expect(parsed.name).toBe((error as Error).name);
      expect(parsed.code).toBe(code);
      expect(parsed.message).toBe((error as Error).message);
    }
    expect(failureReason('plain')).toBe('Error: plain');
    expect(parseFailureReason('job stalled more than allowable limit')).toEqual({
      name: 'Error',
      code: null,
      message: 'job stalled more than allowable limit',
    });
  });

  it('every distributed error is an AgentMachineError with a code', () => {
    const failed = new AgentJobFailedError('7', 's', 'UnknownAgentError', 'UNKNOWN_AGENT', 'reason');
    expect(failed).toBeInstanceOf(AgentMachineError);
    expect(failed).toMatchObject({ name: 'AgentJobFailedError', code: 'AGENT_JOB_FAILED' });
    expect(failed.message).toBe('Agent job 7 (session "s") failed: reason');
    expect(new UnknownAgentError('x', []).message).toContain('registered: none');
  });
});

describe('optional packages', () => {
  it('names a missing package and what to install', async () => {
    const error = await importModule('agent-machine-no-such-package').catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'DistributedDependencyMissingError',
      code: 'DISTRIBUTED_DEPENDENCY_MISSING',
      moduleName: 'agent-machine-no-such-package',
    });
    expect((error as Error).message).toContain('npm install bullmq ioredis');
  });
});
