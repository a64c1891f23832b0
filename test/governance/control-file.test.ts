import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { fileRawStore } from '../registry/fixtures/raw-store.js';
import { runControlSuite } from './control-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'callisto-governance-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runControlSuite({
  kind: 'file',
  address: () => `file://${dir}`,
  rawStore: async () => fileRawStore(dir),
});
