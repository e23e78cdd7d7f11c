import { InvalidArgumentError } from '../../state/errors';
import { CheckpointNotFoundError, CorruptSessionError } from '../errors';
import type { StoredAt } from '../session-document';
import type { Checkpoint } from './checkpoint';
import { decodeRecord, readRecordHead, withGeneration } from './journal-record';
import { type Replayed, replay } from './journal-replay';
import { newGen } from './journal-writer';

/**
 * Reading a journal held as a list of record texts, oldest first (the memory and file stores):
 * the state at the newest record, or at a given version, reads the newest snapshot at or before
 * it and the records after that snapshot only.
 */
export function replayRecords(
  texts: readonly string[],
  at: StoredAt,
  version: number | null = null,
): Replayed {
  const heads = texts.map((text) => headOrFail(text, at));
  let end = heads.length - 1;
  if (version !== null) {
    end = heads.findIndex((h) => h.version === version);
    if (end < 0) throw new CheckpointNotFoundError(at.sessionId, version);
  }
  let start = end;
  while (start > 0 && heads[start]?.kind !== 'snapshot') start--;
  return replay(
    texts.slice(start, end + 1).map((text) => decodeRecord(text, at)),
    at,
  );
}

/**
 * The records of a fork at `version` of a journal held as record texts: those before the newest
 * snapshot at or before `version` as they are (`kept` of them), then that snapshot and the deltas
 * after it up to `version` under a new generation. A writer that remembers the origin (or a
 * session the fork replaces) then finds a generation it does not know, and writes a snapshot
 * instead of a delta onto records it did not write.
 */
export function forkRecords(
  texts: readonly string[],
  version: number,
  at: StoredAt,
): { texts: string[]; kept: number } {
  const heads = texts.map((text) => headOrFail(text, at));
  const end = heads.findIndex((h) => h.version === version);
  if (end < 0) throw new CheckpointNotFoundError(at.sessionId, version);
  let start = end;
  while (start > 0 && heads[start]?.kind !== 'snapshot') start--;
  const gen = newGen();
  const chain = texts.slice(start, end + 1).map((text) => withGeneration(decodeRecord(text, at), gen));
  return { texts: [...texts.slice(0, start), ...chain], kept: start };
}

/** The checkpoints of a journal held as record texts. */
export function checkpointsOf(texts: readonly string[], at: StoredAt): Checkpoint[] {
  return texts.map((text) => {
    const head = headOrFail(text, at);
    return { version: head.version, stepNumber: head.step, savedAt: new Date(head.at) };
  });
}

/** The version of the newest record. */
export function lastVersion(texts: readonly string[], at: StoredAt): number | null {
  const last = texts[texts.length - 1];
  return last === undefined ? null : headOrFail(last, at).version;
}

/** The generation of the newest record (a writer's tip must name it to append a delta). */
export function lastGen(texts: readonly string[], at: StoredAt): string | null {
  const last = texts[texts.length - 1];
  return last === undefined ? null : headOrFail(last, at).gen;
}

/** Checks a version given to loadCheckpoint or fork. */
export function assertVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1)
    throw new InvalidArgumentError(
      'version',
      `${String(version)} is not a positive integer (a version from store.checkpoints())`,
    );
}

function headOrFail(text: string, at: StoredAt) {
  const head = readRecordHead(text);
  if (!head)
    throw new CorruptSessionError(at.sessionId, 'a journal record has no readable head', at.location);
  return head;
}
