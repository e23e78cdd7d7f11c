/**
 * The checkpoint journal writes a state's steps through the state's own encoder
 * (`AgentStep.serialize`, `ExecutionState.serializeHead`), and its other fields as head fields,
 * each named in HEAD_FIELDS, which a load accepts. A field the state's document gains must be a
 * head field too, or a journal store would drop it.
 */
import { describe, expect, it } from 'vitest';
import { HEAD_FIELDS } from '../../src/persistence/journal/journal-record';
import { AgentState } from '../../src/state/agent-state';

describe('journal head fields', () => {
  it("are the state document's fields, its context's settings flat, but its messages", () => {
    // with every optional field set (agentVersion is written only when an agent has a version)
    const full = AgentState.empty().withAgentVersion('1');
    const document = JSON.parse(JSON.stringify(full)) as Record<string, unknown>;
    const { formatVersion: _version, context, ...fields } = document;
    const { messages: _messages, ...settings } = context as Record<string, unknown>;
    expect([...HEAD_FIELDS].sort()).toEqual([...Object.keys(fields), ...Object.keys(settings)].sort());
  });
});
