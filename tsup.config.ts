import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm', 'cjs'],
  // TypeScript 7 (the native compiler) has no JS API for tsup's dts: `tsc -p tsconfig.build.json` emits them
  dts: false,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Class names are API (error names, `_AgentStopError` recorded in states): minified names must not leak.
  keepNames: true,
});
