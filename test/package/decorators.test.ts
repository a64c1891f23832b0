/**
 * The README's decorator example as a user gets it: the packed package installed in a fresh ES module
 * project, `tsc --init`'s settings with the target the README says (`es2023`; `esnext` would keep the
 * decorators as written, which Node cannot run) and `skipLibCheck` off, compiled by tsc and run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installTarball, node, pack, tempDir, tsc, tscInit, writeReadmeFiles } from './project.js';

const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the README decorator example', () => {
  it('compiles with tsc (standard decorators, skipLibCheck off) and runs with the packed package', async () => {
    const out = tempDir('callisto-decorators-pack-');
    const dir = tempDir('callisto-decorators-app-');
    dirs.push(out, dir);
    const { tarball } = await pack(out);
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'decorators-app', private: true, type: 'module' }),
    );
    await installTarball(dir, tarball);
    writeReadmeFiles(dir, ['contract.ts', 'decorated.ts']);
    await tscInit(dir);
    const config = path.join(dir, 'tsconfig.json');
    const text = fs.readFileSync(config, 'utf8');
    expect(text).toContain('"target": "esnext"');
    fs.writeFileSync(
      config,
      text.replace('"target": "esnext",', '"target": "es2023",\n    "lib": ["esnext", "dom"],'),
    );
    await tsc(dir);
    // Lowered by tsc: no decorator syntax left for Node to choke on.
    expect(fs.readFileSync(path.join(dir, 'decorated.js'), 'utf8')).not.toMatch(/^@RpcService/m);
    expect(await node(dir, 'decorated.js')).toBe('user-7\n');
  }, 180_000);
});
