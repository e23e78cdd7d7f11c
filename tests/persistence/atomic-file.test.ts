import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/persistence/atomic-file';
import { KeyedLock } from '../../src/persistence/keyed-lock';
import { tempDir } from './fixtures';

describe('writeFileAtomic', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
  });
  afterEach(async () => {
    await remove();
  });

  it('creates and replaces a file, leaving nothing else behind', async () => {
    const file = join(dir, 'a.json');
    await writeFileAtomic(file, 'one');
    await writeFileAtomic(file, 'two ünïcødé');
    expect(await readFile(file, 'utf8')).toBe('two ünïcødé');
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it('raises the error of a failed rename and removes its temporary file', async () => {
    const target = join(dir, 'taken.json');
    await mkdir(join(target, 'inside'), { recursive: true });
    await expect(writeFileAtomic(target, 'data')).rejects.toMatchObject({
      code: expect.stringMatching(/EISDIR|ENOTEMPTY|EEXIST/),
    });
    expect(await readdir(dir)).toEqual(['taken.json']);
  });

  it('raises the error when the directory does not exist', async () => {
    await expect(writeFileAtomic(join(dir, 'missing', 'a.json'), 'data')).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('KeyedLock', () => {
  it('runs tasks of one key in call order, each after the previous settled, failures included', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await new Promise((resolve) => setImmediate(resolve));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      lock.run('k', task('a')),
      lock.run('k', task('b', true)),
      lock.run('k', task('c')),
      lock.run('other', task('x')),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'a',
      'b',
      'c',
      'x',
    ]);
    expect(results[1]?.status).toBe('rejected');
    const k = log.filter((entry) => !entry.endsWith('x'));
    expect(k).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    // The other key did not wait for key k.
    expect(log.indexOf('start x')).toBeLessThan(log.indexOf('end a'));
  });
});
