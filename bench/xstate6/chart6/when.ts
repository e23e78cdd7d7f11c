/**
 * XState 6 has no guarded transition arrays, no named actions in a transition and no `assign`: a
 * transition is one function `(args, enq) => { target?, context? } | undefined` (undefined: not
 * taken). This adapter keeps the v5 chart's shape (lists of `{ guard, target, actions }` with guard
 * and action names) and turns each list into that function, so the port keeps every state and
 * transition of machines/*.ts and `machine.provide({ guards, actions })` still swaps them by name.
 *
 * An action here is `(args, enq, params) => { context: patch } | void`, as XState 6 types named
 * actions: a context patch (what `assign` did) and effects through `enq` (what `sendTo`, `emit`,
 * `spawnChild`, `stopChild` did).
 */
export type Named = string | { readonly type: string; readonly params?: unknown };
export type GuardRef = Named | { readonly and: readonly Named[] };
export interface Branch {
  readonly guard?: GuardRef;
  readonly target?: string;
  readonly actions?: Named | readonly Named[];
}
// biome-ignore lint/suspicious/noExplicitAny: the machine's args, typed by the machine
type Args = any;
// biome-ignore lint/suspicious/noExplicitAny: XState 6's enqueue object
type Enq = any;
type Patch = Record<string, unknown>;

const nameOf = (ref: Named) => (typeof ref === 'string' ? ref : ref.type);
const paramsOf = (ref: Named) => (typeof ref === 'string' ? undefined : ref.params);

function passes(guard: GuardRef, args: Args): boolean {
  if (typeof guard === 'object' && 'and' in guard) return guard.and.every((g) => passes(g, args));
  return args.guards[nameOf(guard)](args, paramsOf(guard));
}

/** Runs the named actions in order, each seeing the context the ones before it patched; the merged patch. */
export function perform(list: readonly Named[], args: Args, enq: Enq): Patch | undefined {
  let patch: Patch | undefined;
  let current = args;
  for (const ref of list) {
    const result = args.actions[nameOf(ref)](current, enq, paramsOf(ref))?.context;
    if (!result) continue;
    patch = patch ? { ...patch, ...result } : result;
    current = { ...current, context: { ...current.context, ...result } };
  }
  return patch;
}

const listOf = (actions: Branch['actions']): readonly Named[] =>
  actions === undefined ? [] : Array.isArray(actions) ? actions : [actions as Named];

/** The first branch whose guard passes is taken (none: the event is not handled here). */
export function when(...branches: readonly Branch[]) {
  return (args: Args, enq: Enq) => {
    for (const branch of branches) {
      if (branch.guard !== undefined && !passes(branch.guard, args)) continue;
      const patch = branch.actions === undefined ? undefined : perform(listOf(branch.actions), args, enq);
      if (branch.target === undefined) return patch ? { context: patch } : {};
      return patch ? { target: branch.target, context: patch } : { target: branch.target };
    }
    return undefined;
  };
}

/** Entry and exit: the named actions in order. */
export function run(...list: readonly Named[]) {
  return (args: Args, enq: Enq) => {
    const patch = perform(list, args, enq);
    return patch ? { context: patch } : undefined;
  };
}
