/**
 * The names the main entry exported before they moved to the subpath entry of their audience, or
 * to `agent-machine/internal` (plumbing): re-exported by the main entry, deprecated, until the next
 * release, and listed in CHANGELOG.md. tests/architecture/main-entry.test.ts checks that each is
 * its new home's own value and that the main entry's own values stay at most 120.
 */

export * from './distributed';
export * from './inspect';
export * from './internal';
export * from './mcp';
export * from './stores';
export * from './telemetry';
export * from './testing';
export * from './ui';
