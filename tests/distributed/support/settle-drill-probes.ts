/**
 * What the settle drill (settle-drill.ts) reads outside the library: the ledger's effects and
 * reconcile answers, which worker holds which session lock, and the pauses it makes.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { DEFAULT_SESSION_LOCK_PREFIX } from '../../../src/distributed/session-lock';
import { type LedgerLine, readLedger } from './ledger-agent';
import type { WorkerProcess } from './worker-processes';

/** The effects in the ledger, per call, against what allows a repeat: an approve, a reconcile's 'not-done'. */
export function countEffects(ledger: string, approved: ReadonlyMap<string, number>) {
  const runs = new Map<string, number>();
  for (const l of readLedger(ledger))
    runs.set(`${l.session} ${l.callId}`, (runs.get(`${l.session} ${l.callId}`) ?? 0) + 1);
  const notDone = new Map<string, number>();
  const reconciled = { done: 0, notDone: 0 };
  const answers = `${ledger}.reconciles`;
  const lines = existsSync(answers) ? readFileSync(answers, 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const [, session, callId, status] = line.split(' ');
    if (status === 'done') reconciled.done++;
    else {
      reconciled.notDone++;
      notDone.set(`${session} ${callId}`, (notDone.get(`${session} ${callId}`) ?? 0) + 1);
    }
  }
  let repeatedUnjustified = 0;
  let repeatedJustified = 0;
  for (const [call, n] of runs) {
    if (n <= 1) continue;
    if (n > 1 + (approved.get(call) ?? 0) + (notDone.get(call) ?? 0)) repeatedUnjustified++;
    else repeatedJustified++;
  }
  return { repeatedUnjustified, repeatedJustified, reconciled };
}

/**
 * The effects a paused worker had after its SIGCONT in the sessions it held when paused that
 * repeated a call another line of the ledger holds (its unsafe call run again). A later job of such
 * a session that the worker takes in turn (a decide job, say) runs new calls: not counted.
 */
export function staleEffects(
  ledger: string,
  pauses: readonly { worker: string; held: readonly string[]; at: number }[],
): number {
  const lines = readLedger(ledger);
  let n = 0;
  for (const p of pauses) {
    const sessions = new Set(p.held.map(sessionOfLock));
    for (const [i, l] of lines.entries()) {
      if (i < p.at || l.worker !== p.worker || !sessions.has(l.session)) continue;
      if (lines.some((o, j) => j !== i && o.session === l.session && o.callId === l.callId)) n++;
    }
  }
  return n;
}

const sessionOfLock = (key: string) => key.slice(key.indexOf('{') + 1, key.lastIndexOf('}'));

/** The lines appended to the ledger since the last look. */
export class LedgerTail {
  private offset = 0;
  constructor(private readonly path: string) {}
  fresh(): LedgerLine[] {
    if (!existsSync(this.path)) return [];
    const size = statSync(this.path).size;
    if (size <= this.offset) return [];
    const fd = openSync(this.path, 'r');
    try {
      const buffer = Buffer.alloc(size - this.offset);
      readSync(fd, buffer, 0, buffer.length, this.offset);
      const text = buffer.toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      this.offset += Buffer.byteLength(text.slice(0, end));
      return text
        .slice(0, end)
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [worker = '', session = '', callId = ''] = line.split(' ');
          return { worker, session, callId };
        });
    } finally {
      closeSync(fd);
    }
  }
}

/** A live worker that writes an effect within `timeoutMs` (it is then inside that call), or null. */
export async function freshWriter(
  tail: LedgerTail,
  live: readonly WorkerProcess[],
  timeoutMs: number,
): Promise<WorkerProcess | null> {
  tail.fresh();
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    await sleep(20);
    const writers = new Set(tail.fresh().map((l) => l.worker));
    const found = live.find((w) => writers.has(w.tag));
    if (found) return found;
  }
  return null;
}

/** The workers holding a session lock now (by the owner in the lock's token, `<worker id>/<uuid>`). */
export async function lockHolders(redis: Redis): Promise<Map<string, string[]>> {
  const holders = new Map<string, string[]>();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${DEFAULT_SESSION_LOCK_PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  if (keys.length === 0) return holders;
  const tokens = await redis.mget(...keys);
  keys.forEach((key, i) => {
    const owner = tokens[i]?.split('/')[0];
    if (owner) holders.set(owner, [...(holders.get(owner) ?? []), key]);
  });
  return holders;
}

/**
 * SIGSTOPs `worker` until another worker has taken over a session it held (the session's lock is
 * another's, or another worker recorded a call of it since), or `timeoutMs`; then SIGCONT.
 */
export async function pause(
  worker: WorkerProcess,
  held: readonly string[],
  redis: Redis,
  ledger: string,
  timeoutMs: number,
) {
  const sessions = new Set(held.map(sessionOfLock));
  const othersCalls = () =>
    readLedger(ledger).filter((l) => sessions.has(l.session) && l.worker !== worker.tag).length;
  const before = othersCalls();
  const at = Date.now();
  worker.child.kill('SIGSTOP');
  const takenOver = await waitFor(async () => {
    const tokens = await redis.mget(...held);
    if (tokens.some((token) => token !== null && !token.startsWith(`${worker.tag}/`))) return true;
    return othersCalls() > before;
  }, timeoutMs);
  const outputAt = worker.output().length;
  const resumedAt = readLedger(ledger).length;
  worker.child.kill('SIGCONT');
  return { takenOver, ms: Date.now() - at, outputAt, resumedAt };
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
