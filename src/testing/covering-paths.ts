/** A deterministic few of a list of paths that together take every step of the chart the whole list takes. */
import type { GraphPath } from './graph';
import type { ModelEvent, Snapshot } from './test-model-vocabulary';

/** The value `map` holds for `key`, made by `make` and kept at first use. */
function entry<K, V>(
  map: { get(key: K): V | undefined; set(key: K, value: V): unknown },
  key: K,
  make: () => V,
): V {
  const known = map.get(key);
  if (known !== undefined) return known;
  const made = make();
  map.set(key, made);
  return made;
}

type Guard = (args: { context: unknown; event: ModelEvent }, params: unknown) => unknown;

const answersOf = new WeakMap<Snapshot, WeakMap<ModelEvent, string[]>>();

/**
 * Each guard of the chart, named with its answer in a situation to an event (`-`: it reads a field
 * the event lacks, so it cannot answer).
 */
function guardAnswers(snapshot: Snapshot, event: ModelEvent): string[] {
  const byEvent = entry(answersOf, snapshot, () => new WeakMap<ModelEvent, string[]>());
  return entry(byEvent, event, () => {
    const guards = (snapshot.machine.implementations.guards ?? {}) as unknown as Record<string, Guard>;
    return Object.entries(guards).map(([name, guard]) => {
      try {
        return `${name}: ${guard({ context: snapshot.context, event }, {}) ? 'yes' : 'no'}`;
      } catch {
        return `${name}: -`;
      }
    });
  });
}

/**
 * What a step of a path shows of the chart: the state it leaves, the event's type and behaviour,
 * the state it reaches; and, one by one, each guard's answer to that event in the situation it
 * leaves and in the one it reaches (what the eventless choices on its way read, nearly).
 */
function chartSightings(from: Snapshot | undefined, event: ModelEvent, to: Snapshot): string[] {
  const before = from ? JSON.stringify(from.value) : '(start)';
  const step = `${before} --${event.type}:${event.behaviour ?? ''}--> ${JSON.stringify(to.value)}`;
  const sightings = [step];
  if (from) for (const answer of guardAnswers(from, event)) sightings.push(`${before} ${answer}`);
  for (const answer of guardAnswers(to, event)) sightings.push(`${step} then ${answer}`);
  return sightings;
}

/** The sightings of each step met so far, as numbers (one per distinct sighting). */
class Sightings {
  private readonly numbers = new Map<string, number>();
  private readonly ofStep = new WeakMap<object, WeakMap<ModelEvent, WeakMap<Snapshot, number[]>>>();
  private readonly start = {};

  of(from: Snapshot | undefined, event: ModelEvent, to: Snapshot): number[] {
    const byEvent = entry(this.ofStep, from ?? this.start, () => new WeakMap());
    const byTarget = entry(byEvent, event, () => new WeakMap<Snapshot, number[]>());
    return entry(byTarget, to, () =>
      chartSightings(from, event, to).map((sighting) =>
        entry(this.numbers, sighting, () => this.numbers.size),
      ),
    );
  }

  /** The sightings a path makes, each once. */
  ofPath(path: GraphPath<Snapshot, ModelEvent>): Set<number> {
    const seen = new Set<number>();
    let previous: Snapshot | undefined;
    for (const { event, state } of path.steps) {
      for (const n of this.of(previous, event, state)) seen.add(n);
      previous = state;
    }
    return seen;
  }
}

/**
 * The paths that together make every sighting (`chartSightings`) any of `paths` takes: the paths
 * making the most distinct sightings first (the earlier on a tie), each kept if it makes one none
 * kept before makes. The same paths give the same choice, kept in their original order.
 */
export function coveringPaths<P extends GraphPath<Snapshot, ModelEvent>>(paths: readonly P[]): P[] {
  const sightings = new Sightings();
  const stepsOf = paths.map((path) => sightings.ofPath(path));
  const order = paths.map((_, i) => i).sort((a, b) => stepsOf[b]!.size - stepsOf[a]!.size || a - b);
  const taken = new Set<number>();
  const chosen = new Set<number>();
  for (const i of order) {
    const steps = stepsOf[i]!;
    if ([...steps].every((step) => taken.has(step))) continue;
    chosen.add(i);
    for (const step of steps) taken.add(step);
  }
  return paths.filter((_, i) => chosen.has(i));
}
