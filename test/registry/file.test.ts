import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runRegistryConformance } from './conformance.js';
import { fileRawStore } from './fixtures/raw-store.js';

const dir = mkdtempSync(join(tmpdir(), 'callisto-file-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runRegistryConformance({
  kind: 'file',
  ttlMs: 2_000,
  address: () => `file://${dir}`,
  rawStore: async () => fileRawStore(dir),
});
