/**
 * `npm install` in a fresh clone rewrites package-lock.json when the lock's root entry disagrees
 * with package.json (a dependency or peer added to one and not the other). A clean install keeps
 * the lock as it is, so the root entry must say what package.json says.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(resolve(repo, file), 'utf8'));

describe('package-lock.json', () => {
  it("has a root entry with package.json's dependencies, peers and engines", () => {
    const manifest = read('package.json');
    const root = read('package-lock.json').packages[''];
    for (const field of [
      'dependencies',
      'devDependencies',
      'peerDependencies',
      'peerDependenciesMeta',
      'optionalDependencies',
      'engines',
    ]) {
      expect({ field, value: root[field] }).toEqual({ field, value: manifest[field] });
    }
    expect(root.version).toBe(manifest.version);
  });
});
