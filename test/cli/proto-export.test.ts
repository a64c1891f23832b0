/**
 * `callisto proto export <service> --module <file>`, the built binary in a child process: the .proto of
 * a definition the application's module exports, on stdout or in `--out`, the same text as
 * `exportProto`; a service not there, several of them, one that cannot be written, a module that cannot
 * be imported: one line and the exit code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportProto } from '../../src/index.js';
import { CATALOG_PROTO, CatalogDef } from '../schemas/fixtures/catalog.js';
import { buildCli, type CliBuild, expectOneLineError, REPO, runCli, show } from './support/cli.js';

let cli: CliBuild;
let module: string;

const url = (file: string) => JSON.stringify(pathToFileURL(file).href);

beforeAll(async () => {
  cli = await buildCli();
  // the application's module, as a user writes it against the built package
  module = path.join(cli.cwd, 'services.mjs');
  writeFileSync(
    module,
    [
      `import protobuf from ${url(path.join(REPO, 'node_modules/protobufjs/index.js'))};`,
      `import { z } from ${url(path.join(REPO, 'node_modules/zod/index.js'))};`,
      `import { defineService } from ${url(path.join(REPO, 'dist/index.js'))};`,
      `export const Catalog = defineService('shop.catalog.Catalog', {`,
      `  methods: { getItem: { idempotent: true }, removeItem: {}, watchPrices: { stream: 'server' }, upload: { stream: 'client' }, chat: { stream: 'bidi' } },`,
      `  protobuf: protobuf.loadSync(${JSON.stringify(CATALOG_PROTO)}),`,
      `});`,
      `export const Clock = defineService('time.Clock', { methods: { now: { args: z.tuple([]), returns: z.object({ ms: z.number() }) } } });`,
      `export const ClockV2 = defineService('time.Clock', { version: '2.0.0', methods: { now: { args: z.tuple([]), returns: z.number() } } });`,
      `export const Bare = defineService('time.Bare', { methods: { a: {} } });`,
      `export const notADefinition = { name: 'x' };`,
    ].join('\n'),
  );
}, 300_000);

afterAll(() => cli?.close());

describe('callisto proto export', () => {
  it('writes the .proto of the named service on stdout, the same as exportProto', async () => {
    const result = await runCli(cli, ['proto', 'export', 'shop.catalog.Catalog', '--module', module]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(exportProto(CatalogDef));
  });

  it('--out writes a file; --version picks one of several', async () => {
    const out = path.join(cli.cwd, 'clock.proto');
    const result = await runCli(cli, [
      'proto',
      'export',
      'time.Clock',
      '--version',
      '2.0.0',
      '--module',
      module,
      '--out',
      out,
    ]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toBe('');
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('package time;');
    expect(text).toContain('rpc now (google.protobuf.Empty) returns (NowResponse);');
    expect(text).toContain('message NowResponse {\n  double value = 1;\n}');
  });

  it('mistakes: one line and the exit code', async () => {
    expectOneLineError(
      await runCli(cli, ['proto', 'export', 'time.Clock', '--module', module]),
      2,
      /^error: time\.Clock is defined more than once \(1\.0\.0, 2\.0\.0\): name one with --version/,
    );
    expectOneLineError(
      await runCli(cli, ['proto', 'export', 'time.Clok', '--module', module]),
      1,
      /^error: no service time\.Clok is defined in .*services\.mjs \(did you mean time\.Clock\?\); it defines shop\.catalog\.Catalog, time\.Bare, time\.Clock$/,
    );
    expectOneLineError(
      await runCli(cli, ['proto', 'export', 'time.Bare', '--module', module]),
      1,
      /^error: time\.Bare: declares neither protobuf messages nor argument schemas/,
    );
    expectOneLineError(
      await runCli(cli, ['proto', 'export', 'time.Clock', '--module', path.join(cli.cwd, 'missing.mjs')]),
      2,
      /^error: cannot import --module .*missing\.mjs/,
    );
    expectOneLineError(
      await runCli(cli, ['proto', 'export', 'time.Clock']),
      2,
      /^error: required option '--module <file>' not specified; see --help$/,
    );
    const help = await runCli(cli, ['proto', 'export', '--help']);
    expect(help.stdout).toMatch(
      /^Usage: callisto proto export [\s\S]*\nExamples:\n {2}\$ callisto proto export /,
    );
  });
});
