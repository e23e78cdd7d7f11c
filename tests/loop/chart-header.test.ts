/**
 * machines/agentLoop.ts opens with a map of the chart (CONTRIBUTING says to start reading there):
 * it names exactly the states of the chart, of `inProgress` and of `step`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentLoop } from '../../machines/agentLoop';

type Node = { states: Record<string, Node> };

const header = readFileSync(new URL('../../machines/agentLoop.ts', import.meta.url), 'utf8').split('*/')[0]!;
const map = header.slice(header.indexOf(' * pending'));

describe("the chart file's header", () => {
  it('names every state of the chart, of inProgress and of step, and no other', () => {
    const root = agentLoop.root as unknown as Node;
    const inProgress = root.states.inProgress!;
    const levels = [root, inProgress, inProgress.states.step!];
    const names = new Set(levels.flatMap((node) => Object.keys(node.states)));
    const mapped = new Set(map.match(/[A-Za-z]+/g));
    expect([...mapped].sort()).toEqual([...names].sort());
  });
});
