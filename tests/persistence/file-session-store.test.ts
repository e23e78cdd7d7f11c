import { appendFile, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptSessionError, FileSessionStore, SessionConflictError } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { appendStep, finishedState, frameRecord, tempDir, unframeRecords } from './fixtures';

describe('FileSessionStore', () => {
  let dir: string;
  let remove: () => Promise<void>;
  let store: FileSessionStore;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    store = new FileSessionStore(dir);
  });
  afterEach(async () => {
    await store.close();
    await remove();
  });

  it('lets exactly one of two same-version saves win, when two stores reach the directory through a symlink', async () => {
    const state = AgentState.empty().withUserMessage('hi');
    const link = `${dir}-link`;
    await symlink(dir, link, 'dir');
    const other = new FileSessionStore(link);
    try {
      for (let round = 0; round < 10; round++) {
        const id = `race-${round}`;
        await store.save(id, state, null);
        const outcomes = await Promise.allSettled([store.save(id, state, 1), other.save(id, state, 1)]);
        expect(outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value)).toEqual([2]);
        const lost = outcomes.find((o) => o.status === 'rejected');
        expect(lost?.reason).toBeInstanceOf(SessionConflictError);
      }
    } finally {
      await other.close();
      await rm(link);
    }
  });

  it('writes one append-only journal file per session: a snapshot, then one framed delta per save', async () => {
    const state = await finishedState();
    await store.save('chat-42', state, null);
    const afterFirst = await readFile(join(dir, 'chat-42.journal'));
    await store.save('chat-42', state.withUserMessage('and now?'), 1);
    expect(store.fileOf('chat-42')).toBe(join(dir, 'chat-42.journal'));
    const bytes = await readFile(join(dir, 'chat-42.journal'));
    // Appended: the first record's bytes are untouched.
    expect(bytes.subarray(0, afterFirst.length)).toEqual(afterFirst);
    const records = unframeRecords(bytes).map((text) => JSON.parse(text));
    expect(records.map((r) => [r.journal, r.v, r.kind, r.step])).toEqual([
      [1, 1, 'snapshot', 2],
      [1, 2, 'delta', 2],
    ]);
    expect(Buffer.concat(records.map((r) => frameRecord(JSON.stringify(r))))).toEqual(bytes);
  });

  it.each([
    ['cut off in its header', (frame: Buffer) => frame.subarray(0, 5)],
    ['cut off in its payload', (frame: Buffer) => frame.subarray(0, frame.length - 10)],
    [
      'whose checksum does not match',
      (frame: Buffer) => {
        const bad = Buffer.from(frame);
        bad[bad.length - 3] = (bad[bad.length - 3] as number) ^ 0xff;
        return bad;
      },
    ],
  ])(
    'ignores a last record %s (a crash in an append): load reads the intact part, the next save cuts it off',
    async (_, tear) => {
      let state = AgentState.empty().withUserMessage('first').withExecutionStarted();
      let version = await store.save('torn', state, null);
      state = appendStep(state, 0);
      version = await store.save('torn', state, version);
      const intact = await readFile(join(dir, 'torn.journal'));
      const next = appendStep(state, 1);
      await appendFile(
        join(dir, 'torn.journal'),
        tear(frameRecord(JSON.stringify({ journal: 1, v: 3, torn: true }))),
      );

      const reader = new FileSessionStore(dir);
      const loaded = await reader.load('torn');
      expect(loaded?.version).toBe(2);
      expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      expect((await reader.checkpoints('torn')).map((c) => c.version)).toEqual([1, 2]);
      await reader.close();

      expect(await store.save('torn', next, 2)).toBe(3);
      const bytes = await readFile(join(dir, 'torn.journal'));
      expect(bytes.subarray(0, intact.length)).toEqual(intact);
      expect(unframeRecords(bytes).map((text) => JSON.parse(text).v)).toEqual([1, 2, 3]);
      expect((await new FileSessionStore(dir).load('torn'))?.state.toJSON()).toEqual(next.toJSON());
    },
  );

  /** A session of four records (versions 1 to 4); the offsets where each frame starts, and the file's bytes. */
  async function fourRecords(id: string) {
    let state = AgentState.empty().withUserMessage('first').withExecutionStarted();
    let version = await store.save(id, state, null);
    for (let n = 0; n < 3; n++) {
      state = appendStep(state, n);
      version = await store.save(id, state, version);
    }
    const bytes = await readFile(join(dir, `${id}.journal`));
    const starts: number[] = [];
    for (let offset = 0; offset < bytes.length; offset += 8 + bytes.readUInt32BE(offset)) starts.push(offset);
    return { state, bytes, starts };
  }

  it.each([
    ['in its payload', (start: number) => start + 40],
    ['in its checksum', (start: number) => start + 5],
    ['in its length field', (start: number) => start + 2],
  ])(
    'a damaged record %s with intact records after it is corruption, not a torn write: load and save refuse, the file is left as it is',
    async (_, at) => {
      const { bytes, starts } = await fourRecords('flip');
      const damaged = Buffer.from(bytes);
      const offset = at(starts[2] as number);
      damaged[offset] = (damaged[offset] as number) ^ 0x10;
      await writeFile(join(dir, 'flip.journal'), damaged);

      const reader = new FileSessionStore(dir);
      const error = await reader.load('flip').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptSessionError);
      expect((error as CorruptSessionError).problem).toMatch(
        new RegExp(`damaged at byte ${starts[2]}: .* intact records follow it`),
      );
      // A save must not take the damage for a torn tail and cut off the records after it.
      const saved = await reader.save('flip', AgentState.empty(), 2).catch((e: unknown) => e);
      expect(saved).toBeInstanceOf(CorruptSessionError);
      expect(await readFile(join(dir, 'flip.journal'))).toEqual(damaged);
      await reader.close();
    },
  );

  it('a torn append that left an empty frame (length 0, checksum 0) is a torn tail: load reads the intact part, the next save cuts it off', async () => {
    const { state, bytes } = await fourRecords('zeros');
    await appendFile(join(dir, 'zeros.journal'), Buffer.alloc(8 + 300));

    const reader = new FileSessionStore(dir);
    const loaded = await reader.load('zeros');
    expect(loaded?.version).toBe(4);
    expect(loaded?.state.toJSON()).toEqual(state.toJSON());
    const next = appendStep(state, 9);
    expect(await reader.save('zeros', next, 4)).toBe(5);
    await reader.close();
    const after = await readFile(join(dir, 'zeros.journal'));
    expect(after.subarray(0, bytes.length)).toEqual(bytes);
    expect(unframeRecords(after).map((text) => JSON.parse(text).v)).toEqual([1, 2, 3, 4, 5]);
    expect((await new FileSessionStore(dir).load('zeros'))?.state.toJSON()).toEqual(next.toJSON());
  });

  it('a journal file without one intact record is corrupt (the first record is written whole or not at all)', async () => {
    await writeFile(join(dir, 'empty.journal'), Buffer.from([0, 0, 0, 9, 1, 2]));
    const error = await store.load('empty').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptSessionError);
    expect((error as CorruptSessionError).problem).toBe('the file holds no intact journal record');
  });

  it('leaves no temporary files behind after saves and deletes', async () => {
    for (let i = 0; i < 3; i++) await store.save(`s${i}`, AgentState.empty(), null);
    await store.save('s0', AgentState.empty(), 1);
    await store.delete('s1');
    // Closed first: the lock files it keeps a while after a save go at close.
    await store.close();
    expect((await readdir(dir)).sort()).toEqual(['s0.journal', 's2.journal']);
  });

  it('ignores a temporary file left behind by a crash: not listed, not loaded, not in the way', async () => {
    await store.save('chat', AgentState.empty().withUserMessage('saved'), null);
    // What writeFileAtomic leaves if the process dies before the rename: a half-written temp file.
    await writeFile(join(dir, '.chat.json.1a2b3c4d5e6f.tmp'), '{"version":2,"savedAt":"2026-');
    await writeFile(join(dir, '.orphan.json.0f0f0f0f0f0f.tmp'), '{"version":1');
    expect(await store.list()).toEqual(['chat']);
    expect(await store.load('orphan')).toBeNull();
    const loaded = await store.load('chat');
    expect(loaded?.version).toBe(1);
    expect(loaded?.state.messages()[0]?.content).toBe('saved');
    expect(await store.save('chat', AgentState.empty().withUserMessage('next'), 1)).toBe(2);
    expect(await store.save('orphan', AgentState.empty(), null)).toBe(1);
    expect(await store.list()).toEqual(['chat', 'orphan']);
  });

  it('lists only session files: not other files, directories or names that are not session ids', async () => {
    await store.save('real', AgentState.empty(), null);
    await writeFile(join(dir, 'notes.txt'), 'hello');
    await writeFile(join(dir, 'bad name!.json'), '{}');
    await mkdir(join(dir, 'folder.json'));
    expect(await store.list()).toEqual(['real']);
  });

  it('creates its directory at the first save; before that, list is empty and load finds nothing', async () => {
    const nested = new FileSessionStore(join(dir, 'a', 'b'));
    expect(await nested.list()).toEqual([]);
    expect(await nested.load('s')).toBeNull();
    await nested.delete('s');
    expect(await nested.save('s', AgentState.empty(), null)).toBe(1);
    await nested.close();
    expect(await readdir(join(dir, 'a', 'b'))).toEqual(['s.journal']);
  });

  it('reads a document from before the journal written in another layout (pretty-printed) and saves over it', async () => {
    const state = AgentState.empty().withUserMessage('by hand');
    const pretty = JSON.stringify({ savedAt: new Date().toISOString(), version: 3, state }, null, 2);
    await writeFile(join(dir, 'manual.json'), pretty);
    const loaded = await store.load('manual');
    expect(loaded?.version).toBe(3);
    expect(loaded?.state.toJSON()).toEqual(state.toJSON());
    await expect(store.save('manual', state, 2)).rejects.toMatchObject({ actualVersion: 3 });
    expect(await store.save('manual', state, 3)).toBe(4);
  });

  it('a document of garbage from before the journal: load and save both raise CorruptSessionError and leave it as it is', async () => {
    const garbage = Buffer.from([0x7b, 0x00, 0x01, 0x02, 0x20, 0x7d]);
    await writeFile(join(dir, 'junk.json'), garbage);
    await expect(store.load('junk')).rejects.toBeInstanceOf(CorruptSessionError);
    // The stored version cannot be read, so no save can prove it knows it.
    for (const expected of [null, 1]) {
      const error = await store.save('junk', AgentState.empty(), expected).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptSessionError);
      expect((error as CorruptSessionError).sessionId).toBe('junk');
    }
    expect(await readFile(join(dir, 'junk.json'))).toEqual(garbage);
    await store.delete('junk');
    expect(await store.save('junk', AgentState.empty(), null)).toBe(1);
  });

  it('a file that is not UTF-8 text is corrupt, and says so', async () => {
    await writeFile(join(dir, 'latin.json'), Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    const error = await store.load('latin').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptSessionError);
    expect((error as CorruptSessionError).problem).toBe('the file is not UTF-8 text');
    expect((error as CorruptSessionError).location).toBe(join(dir, 'latin.json'));
  });

  it.each([
    ['an empty file', '', /the stored data is empty/],
    ['an array', '[1, 2]', /not a JSON object of \{ version, savedAt, state \}/],
    [
      'version 0',
      '{"version":0,"savedAt":"2026-01-01T00:00:00.000Z","state":{}}',
      /version is 0, not a positive integer/,
    ],
    [
      'a bad savedAt',
      '{"version":1,"savedAt":"yesterday","state":{}}',
      /savedAt is "yesterday", not an ISO time/,
    ],
    [
      'an unknown key',
      '{"version":1,"savedAt":"2026-01-01T00:00:00.000Z","state":{},"extra":1}',
      /unknown key\(s\) "extra"/,
    ],
    ['no state', '{"version":1,"savedAt":"2026-01-01T00:00:00.000Z","state":null}', /has no state object/],
  ])('a document with %s is corrupt', async (_, text, problem) => {
    await writeFile(join(dir, 'doc.json'), text);
    const error = await store.load('doc').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptSessionError);
    expect((error as CorruptSessionError).problem).toMatch(problem);
    expect(await readFile(join(dir, 'doc.json'), 'utf8')).toBe(text);
  });
});
