import { describe, expect, it, vi } from 'vitest';
import * as distributed from '../../src/distributed/index';
import * as main from '../../src/index';
import * as inspect from '../../src/inspect/index';
import * as internal from '../../src/internal';
import * as mcp from '../../src/mcp/index';
import * as stores from '../../src/persistence/index';
import { AgentStopError } from '../../src/state/agent-stop-error';
import { AgentMachineError, InvalidStateError } from '../../src/state/errors';
import * as telemetry from '../../src/telemetry/index';
import * as testing from '../../src/testing/index';
import * as ui from '../../src/ui/index';

type ErrorClass = (abstract new (...args: never[]) => Error) & { isInstance?: (value: unknown) => boolean };

const entries = { main, stores, distributed, inspect, ui, mcp, telemetry, testing, internal };

/** Every error class the package exports, by its exported name. */
function errorClasses(modules: Record<string, Record<string, unknown>>): Map<string, ErrorClass> {
  const found = new Map<string, ErrorClass>();
  for (const module of Object.values(modules))
    for (const [name, value] of Object.entries(module))
      if (typeof value === 'function' && value.prototype instanceof Error)
        found.set(name, value as ErrorClass);
  return found;
}

/** Whatever a constructor reads of it, an argument that answers (a string, a callable, an object). */
function anything(): unknown {
  const target = () => {};
  const proxy: unknown = new Proxy(target, {
    get: (_, key) => (key === Symbol.toPrimitive ? () => 'x' : key === Symbol.iterator ? undefined : proxy),
    apply: () => proxy,
    construct: () => proxy as object,
  });
  return proxy;
}

/** An instance made the way the library makes one; the classes whose constructors check their input get it. */
function instanceOf(name: string, type: ErrorClass): Error {
  const divergence = { stepNumber: 1, kind: 'model-call', path: 'messages', recorded: 1, replayed: 2 };
  const args: Record<string, unknown[]> = {
    ModelRetriesExhaustedError: [[Object.assign(new Error('busy'), { url: 'u', isRetryable: true })]],
    AllModelsFailedError: [[], []],
    ReplayDivergenceError: [divergence],
    ReplayAssertionError: [divergence, anything()],
  };
  return Reflect.construct(type, args[name] ?? [anything(), anything(), anything(), anything()]) as Error;
}

const classes = errorClasses(entries);

describe('error classes', () => {
  it('finds the exported error classes', () => {
    expect(classes.size).toBeGreaterThan(50);
    expect(classes.get('AgentStopError')).toBe(AgentStopError);
  });

  it.each([...classes])('%s is named as it is exported, and so are its errors', (name, type) => {
    expect(type.name).toBe(name);
    const error = instanceOf(name, type);
    expect(error.name).toBe(name === 'ModelRetriesExhaustedError' ? 'AI_APICallError' : name);
  });

  it.each([...classes].filter(([, type]) => type.prototype instanceof AgentMachineError))(
    '%s.isInstance knows its errors, also those of another copy of the library',
    async (name, type) => {
      const error = instanceOf(name, type);
      expect(type.isInstance?.(error)).toBe(true);
      expect(AgentMachineError.isInstance(error)).toBe(true);
      expect(type.isInstance?.(new Error('x'))).toBe(false);
      expect(type.isInstance?.({ name, message: 'x', code: 'X' })).toBe(false);
      const other: ErrorClass = type === InvalidStateError ? AgentStopError : InvalidStateError;
      expect(other.isInstance?.(error)).toBe(false);

      vi.resetModules();
      const copies = await Promise.all(
        Object.keys(entries).map(async (key) => [key, await importEntry(key)]),
      );
      const copy = errorClasses(Object.fromEntries(copies)).get(name) as ErrorClass;
      expect(copy).not.toBe(type);
      const copied = instanceOf(name, copy);
      expect(copied).not.toBeInstanceOf(type);
      expect(type.isInstance?.(copied)).toBe(true);
      expect(copy.isInstance?.(error)).toBe(true);
      expect(AgentMachineError.isInstance(copied)).toBe(true);
    },
  );
});

async function importEntry(key: string): Promise<Record<string, unknown>> {
  const paths: Record<string, () => Promise<Record<string, unknown>>> = {
    main: () => import('../../src/index'),
    stores: () => import('../../src/persistence/index'),
    distributed: () => import('../../src/distributed/index'),
    inspect: () => import('../../src/inspect/index'),
    ui: () => import('../../src/ui/index'),
    mcp: () => import('../../src/mcp/index'),
    telemetry: () => import('../../src/telemetry/index'),
    testing: () => import('../../src/testing/index'),
    internal: () => import('../../src/internal'),
  };
  return (paths[key] as () => Promise<Record<string, unknown>>)();
}
