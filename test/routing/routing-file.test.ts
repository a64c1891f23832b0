import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runRoutingSuite } from './routing-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'callisto-routing-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runRoutingSuite({ kind: 'file', address: () => `file://${dir}` });
