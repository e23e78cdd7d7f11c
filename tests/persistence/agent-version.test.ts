import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { type StoreFixture, storeKinds } from './fixtures';

/** A journal record as agent-machine wrote it before agent versions (the file store's old document's state). */
const OLD_STATE = JSON.parse(
  readFileSync(new URL('./fixtures/session-format-1.txt', import.meta.url), 'utf8'),
).state;

const started = () => AgentState.empty().withSystemPrompt('s').withUserMessage('go').withExecutionStarted();

describe('AgentState.agentVersion()', () => {
  it('is null for a new state and for a document written before versions', () => {
    expect(AgentState.empty().agentVersion()).toBeNull();
    expect(AgentState.fromJSON(OLD_STATE).agentVersion()).toBeNull();
  });

  it('is kept by toJSON/fromJSON, and written only when there is one', () => {
    const state = started().withAgentVersion('2');
    expect(state.toJSON()).toMatchObject({ agentVersion: '2' });
    expect(AgentState.fromJSON(JSON.stringify(state)).agentVersion()).toBe('2');
    expect('agentVersion' in started().toJSON()).toBe(false);
    expect(state.withUserMessage('more').agentVersion()).toBe('2');
    expect(state.withAgentVersion(null).agentVersion()).toBeNull();
  });

  it('refuses a version that is not a non-empty string', () => {
    expect(() => started().withAgentVersion('')).toThrow(InvalidArgumentError);
    expect(() => started().withAgentVersion(2 as unknown as string)).toThrow(/agentVersion/);
    expect(() => AgentState.fromJSON({ ...OLD_STATE, agentVersion: '' })).toThrow(/agentVersion/);
  });
});

describe.each(storeKinds)('agent versions in the journal of $name', (kind) => {
  let fixture: StoreFixture;
  afterEach(() => fixture?.cleanup());

  it('saves no version field for a state without one (journals read as before)', async () => {
    fixture = await kind.create();
    await fixture.store.save('s', started(), null);
    expect(await fixture.readRecord('s')).not.toContain('agentVersion');
    expect((await fixture.reopen().load('s'))?.state.agentVersion()).toBeNull();
  });

  it('saves the version in the head: set, changed in a delta, and cleared', async () => {
    fixture = await kind.create();
    let version = await fixture.store.save('s', started().withAgentVersion('1'), null);
    expect((await fixture.reopen().load('s'))?.state.agentVersion()).toBe('1');
    const loaded = (await fixture.store.load('s'))?.state as AgentState;
    version = await fixture.store.save('s', loaded.withAgentVersion('2'), version);
    const records = await fixture.readRecords('s');
    expect(JSON.parse(records[records.length - 1] as string)).toMatchObject({
      kind: 'delta',
      head: { agentVersion: '2' },
    });
    expect((await fixture.reopen().load('s'))?.state.agentVersion()).toBe('2');
    const again = (await fixture.store.load('s'))?.state as AgentState;
    await fixture.store.save('s', again.withAgentVersion(null), version);
    expect((await fixture.reopen().load('s'))?.state.agentVersion()).toBeNull();
  });
});
