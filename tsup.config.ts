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
  // import.meta.url in the CommonJS build too: the testing entry loads its optional peer with createRequire.
  shims: true,
  // TypeScript 7 (the native compiler) has no JS API for tsup's dts: `tsc -p tsconfig.build.json` emits them
  dts: false,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Class names are API (`console.log(state)` shows `AgentState`). Error classes declare their names
  // (a static `name` getter); the others need keepNames: esbuild renames a class that refers to
  // itself (`_AgentState`) and the CommonJS chunks' transform one with fields (`_class`). Its cost,
  // a dictionary-mode object for each named closure made, is kept off the hot paths (docs/performance.md).
  keepNames: true,
});
