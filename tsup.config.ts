import { defineConfig } from 'tsup';

export default defineConfig({
  // The main entry, the CLI, and the subpath entries by audience (package.json "exports").
  entry: {
    index: 'src/index.ts',
    cli: 'src/cli.ts',
    stores: 'src/persistence/index.ts',
    distributed: 'src/distributed/index.ts',
    inspect: 'src/inspect/index.ts',
    ui: 'src/ui/index.ts',
    mcp: 'src/mcp/index.ts',
    telemetry: 'src/telemetry/index.ts',
    testing: 'src/testing/index.ts',
    internal: 'src/internal.ts',
  },
  format: ['esm', 'cjs'],
  // Shared code in chunks for CommonJS too: one copy of every class, so `instanceof` holds across
  // entries (`AgentState` from 'agent-machine' is the one 'agent-machine/stores' loads).
  splitting: true,
  // TypeScript 7 (the native compiler) has no JS API for tsup's dts: `tsc -p tsconfig.build.json` emits them
  dts: false,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // No keepNames (its `__name` calls made each named closure a slow dictionary-mode object): a class
  // that esbuild renames (`_AgentState`, for one that refers to itself) declares `static name`;
  // tests/package checks every exported class's name, tests/state/error-classes.test.ts its errors'.
});
