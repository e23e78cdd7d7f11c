import { createRequire } from 'node:module';
import { AgentMachineError } from '../state/errors';

/**
 * A path of a machine's situation graph, as `@xstate/graph` makes it (its `StatePath`), declared
 * here so that the package's types do not need `@xstate/graph`: it is an optional peer, which only
 * model-based tests load.
 */
export interface GraphPath<TSnapshot, TEvent> {
  /** The state the path ends in. */
  state: TSnapshot;
  /** The state-event pairs that reach it, in order. */
  steps: Array<{ state: TSnapshot; event: TEvent }>;
  /** The combined weight of the steps. */
  weight: number;
}

/** The functions of `@xstate/graph` the test model uses (loosely typed: its own types stay out). */
interface GraphModule {
  getShortestPaths(logic: unknown, options: unknown): unknown;
  getSimplePaths(logic: unknown, options: unknown): unknown;
  getAdjacencyMap(logic: unknown, options: unknown): unknown;
}

/** `createAgentTestModel` needs the optional package `@xstate/graph`, which is not installed. */
export class TestingDependencyMissingError extends AgentMachineError {
  static override get name(): string {
    return 'TestingDependencyMissingError';
  }

  constructor(options?: { cause?: unknown }) {
    super(
      'TESTING_DEPENDENCY_MISSING',
      'createAgentTestModel() needs the optional package "@xstate/graph", which is not installed (or ' +
        'could not be loaded). Run `npm install -D @xstate/graph`.',
      options,
    );
  }
}

let graph: GraphModule | null = null;

/** Loads `@xstate/graph` at first use, synchronously (the test model's path functions are). */
export function loadGraph(): GraphModule {
  if (graph) return graph;
  try {
    graph = createRequire(import.meta.url)('@xstate/graph') as GraphModule;
  } catch (error) {
    throw new TestingDependencyMissingError({ cause: error });
  }
  return graph;
}
