import { provisionTestTools } from './test-tools';

/** vitest's global setup: the programs some tests need are installed before any test file loads. */
export default function setup(): void {
  provisionTestTools();
}
