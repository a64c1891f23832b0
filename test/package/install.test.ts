/**
 * The package as a user gets it: `npm pack` (which builds through `prepare`), installed from the tarball
 * into a fresh ES module project and a fresh CommonJS project (`npm init -y`), where the README's quick
 * start runs as written: provider first, then the consumer, from the same directory, over real sockets.
 * The TypeScript quick start is compiled under `tsc --init`'s defaults with `skipLibCheck: false`, so the
 * shipped declarations must typecheck without `@types/node`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  installTarball,
  node,
  npm,
  npx,
  type Packed,
  pack,
  REPO,
  startNode,
  tempDir,
  tsc,
  tscInit,
  writeReadmeFiles,
} from './project.js';

const dirs: string[] = [];
let packed: Packed;

beforeAll(async () => {
  const out = tempDir('callisto-pack-');
  dirs.push(out);
  packed = await pack(out);
}, 180_000);

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Installs take seconds each, more on a loaded machine: generous, since npm bounds each one itself. */
const INSTALL_TIMEOUT_MS = 180_000;

let esm: Promise<string> | undefined;
/** The fresh ES module project, made once for the tests that look into it. */
const esmProject = () =>
  (esm ??= freshProject('callisto-esm-', { name: 'esm-app', private: true, type: 'module' }));

/** A fresh project directory with `package.json` as given (or as `npm init -y` writes it). */
async function freshProject(prefix: string, packageJson?: object): Promise<string> {
  const dir = tempDir(prefix);
  dirs.push(dir);
  if (packageJson) fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(packageJson, null, 2));
  else await npm(dir, ['init', '-y']);
  await installTarball(dir, packed.tarball);
  return dir;
}

/** A fresh project with the tarball and `extra` packages (`typescript@5`, `ioredis@5`) installed in one go. */
async function projectWith(prefix: string, packageJson: object, extra: string[]): Promise<string> {
  const dir = tempDir(prefix);
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(packageJson, null, 2));
  await installTarball(dir, packed.tarball, extra);
  return dir;
}

/** The tsconfig.json `nest new` writes (Nest 10 and 11): CommonJS, and no moduleResolution (so node10). */
const NEST_CLASSIC_TSCONFIG = {
  compilerOptions: {
    module: 'commonjs',
    declaration: true,
    removeComments: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    target: 'ES2021',
    sourceMap: true,
    outDir: './dist',
    baseUrl: './',
    incremental: true,
    skipLibCheck: true,
    strictNullChecks: false,
    noImplicitAny: false,
    strictBindCallApply: false,
    forceConsistentCasingInFileNames: false,
    noFallthroughCasesInSwitch: false,
  },
};

/** A file that imports from every subpath (`callisto/nestjs` for its types: Nest is not installed; `callisto/internal` too). */
const EVERY_SUBPATH = [
  "import { callisto, defineService } from 'callisto';",
  "import { createFileRegistry } from 'callisto/registry';",
  "import { createMemoryTransport, type Serializer } from 'callisto/extend';",
  "import { createTestKit } from 'callisto/testing';",
  "import type { CallistoModuleOptions } from 'callisto/nestjs';",
  "import type { LoadedConfig } from 'callisto/internal';",
  'export type Used = [Serializer, CallistoModuleOptions, LoadedConfig];',
  "const GreeterDef = defineService<{ hi(name: string): Promise<string> }>('test.Greeter', { methods: { hi: {} } });",
  'console.log(typeof callisto, typeof createFileRegistry, createMemoryTransport().name, typeof createTestKit, GreeterDef.name);',
  '',
].join('\n');

/** Runs the quick start in `dir`: the provider, then the consumer once the provider serves. */
async function runQuickStart(
  dir: string,
): Promise<{ consumer: string; provider: string; exit: number | null }> {
  const provider = startNode(dir, 'provider.js');
  try {
    await provider.waitFor(/provider serving on \S+:\d+/);
    const consumer = await node(dir, 'consumer.js');
    return { consumer, provider: provider.output(), exit: await provider.stop() };
  } finally {
    await provider.stop();
  }
}

function expectQuickStartOutput(result: { consumer: string; provider: string; exit: number | null }) {
  expect(result.consumer).toContain('getUser(7) -> user-7, joinedAt is a Date: true');
  expect(result.consumer).toContain('rename(7, "Ann") -> done');
  expect(result.consumer).toContain('getUser(-1) -> ProviderError RangeError: no user -1');
  expect(result.provider).toContain('renamed user 7 to Ann');
  expect(result.exit).toBe(0); // SIGTERM: a graceful shutdown through handleSignals()
}

describe('the packed package', () => {
  it(
    'ships the build, its declarations, LICENSE, and the sources its maps point at; no tests',
    () => {
      const files = new Set(packed.files);
      for (const file of [
        'package.json',
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/index.js.map',
        'dist/registry/index.js',
        'dist/registry/index.d.ts',
        'src/index.ts',
      ]) {
        expect(files, file).toContain(file);
      }
      expect(packed.files.filter((file) => /\.test\.|^test\//.test(file))).toEqual([]);
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'resolves every source map entry to a file inside the installed package',
    async () => {
      const dir = await esmProject();
      const root = path.join(dir, 'node_modules/callisto');
      const license = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8');
      expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
      expect(license).toContain('END OF TERMS AND CONDITIONS');
      expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
      const maps = fs
        .readdirSync(path.join(root, 'dist'), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.map'));
      expect(maps.length).toBeGreaterThan(50);
      const unresolved: string[] = [];
      for (const map of maps) {
        const mapFile = path.join(root, 'dist', map);
        const { sources, sourceRoot } = JSON.parse(fs.readFileSync(mapFile, 'utf8')) as {
          sources: string[];
          sourceRoot?: string;
        };
        for (const source of sources) {
          const resolved = path.resolve(path.dirname(mapFile), sourceRoot ?? '', source);
          if (!resolved.startsWith(root) || !fs.existsSync(resolved)) unresolved.push(`${map} -> ${source}`);
        }
      }
      expect(unresolved).toEqual([]);
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'runs the TypeScript quick start in a fresh ES module project, compiled with skipLibCheck off',
    async () => {
      const dir = await esmProject();
      writeReadmeFiles(dir, ['contract.ts', 'provider.ts', 'consumer.ts']);
      // The extension authors' subpath: its declarations need no Node types either, and an extension
      // written against them compiles without a cast.
      fs.writeFileSync(
        path.join(dir, 'extension.ts'),
        [
          "import { builtinExtensions, type ClusterFactory, type LoadBalancer, type Transport } from 'callisto/extend';",
          'export const first: LoadBalancer = { select: (endpoints) => endpoints[0]! };',
          'export const once: ClusterFactory = (context) => (invocation) =>',
          '  context.invoke(context.select(invocation), invocation);',
          'export const named = (transport: Transport): string => transport.name;',
          "console.log(builtinExtensions.names('transport').join(','));",
          '',
        ].join('\n'),
      );
      await tscInit(dir);
      await tsc(dir);
      expect(await node(dir, 'extension.js')).toContain('tcp,memory');
      // The subpath exports resolve from ESM too.
      fs.writeFileSync(
        path.join(dir, 'subpath.mjs'),
        [
          "import { createFileRegistry } from 'callisto/registry';",
          "import { createMemoryTransport } from 'callisto/extend';",
          "import { createTestKit } from 'callisto/testing';",
          'console.log(typeof createFileRegistry, createMemoryTransport().name, typeof createTestKit);',
          '',
        ].join('\n'),
      );
      expect(await node(dir, 'subpath.mjs')).toContain('function memory function');
      expectQuickStartOutput(await runQuickStart(dir));
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'runs the CommonJS quick start in a fresh `npm init -y` project; TypeScript compiles CommonJS callers',
    async () => {
      const dir = await freshProject('callisto-cjs-');
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).type ?? 'commonjs').toBe(
        'commonjs',
      );
      writeReadmeFiles(dir, ['contract.js', 'provider.js', 'consumer.js']);
      // TypeScript compiling to CommonJS resolves the package through its `require` condition, to the same
      // declarations, and the emitted require() runs.
      fs.writeFileSync(
        path.join(dir, 'typed.cts'),
        [
          "import callisto = require('callisto');",
          'interface Greeter { hi(name: string): Promise<string> }',
          "const GreeterDef = callisto.defineService<Greeter>('test.Greeter', { methods: { hi: {} } });",
          'async function main(): Promise<void> {',
          "  const app = await callisto.callisto({ logLevel: 'silent' });",
          '  const greeter = app.refer(GreeterDef, { mock: true, mockImpl: { hi: (name: string) => "hi " + name } });',
          "  console.log(await greeter.hi('cjs'));",
          '  await app.close();',
          '}',
          'void main();',
          '',
        ].join('\n'),
      );
      await tscInit(dir);
      await tsc(dir);
      expect(await node(dir, 'typed.cjs')).toContain('hi cjs');
      // The NestJS way: `module: commonjs`, an older target, Node's types, and plain import syntax, which
      // compiles to require().
      const nest = path.join(dir, 'nest');
      fs.mkdirSync(nest);
      fs.writeFileSync(
        path.join(nest, 'main.ts'),
        [
          "import { callisto, defineService } from 'callisto';",
          "import { createFileRegistry } from 'callisto/registry';",
          'interface Greeter { hi(name: string): Promise<string> }',
          "const GreeterDef = defineService<Greeter>('test.Greeter', { methods: { hi: {} } });",
          'async function main(): Promise<void> {',
          "  const app = await callisto({ logLevel: 'silent' });",
          '  const greeter = app.refer(GreeterDef, { mock: true, mockImpl: { hi: (name: string) => "hi " + name } });',
          "  console.log(await greeter.hi('nest'), typeof createFileRegistry);",
          '  await app.close();',
          '}',
          'void main();',
          '',
        ].join('\n'),
      );
      fs.writeFileSync(
        path.join(nest, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'commonjs',
            target: 'es2021',
            strict: true,
            skipLibCheck: false,
            types: ['node'],
            typeRoots: [path.join(REPO, 'node_modules/@types')],
            outDir: 'out',
          },
          include: ['main.ts'],
        }),
      );
      await tsc(nest);
      expect(fs.readFileSync(path.join(nest, 'out/main.js'), 'utf8')).toContain('require("callisto")');
      expect(await node(nest, 'out/main.js')).toContain('hi nest function');
      fs.writeFileSync(
        path.join(dir, 'subpath.js'),
        [
          "const { createFileRegistry } = require('callisto/registry');",
          "const { createMemoryTransport } = require('callisto/extend');",
          "const { createTestKit } = require('callisto/testing');",
          'console.log(typeof createFileRegistry, createMemoryTransport().name, typeof createTestKit);',
          '',
        ].join('\n'),
      );
      expect(await node(dir, 'subpath.js')).toContain('function memory function');
      expectQuickStartOutput(await runQuickStart(dir));
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'installs the callisto command: `npx callisto` lists and calls a provider of the project',
    async () => {
      expect(packed.files).toContain('dist/cli/main.js');
      // the dashboard's page, copied into dist by the build (`callisto dashboard` serves it from there)
      for (const file of ['index.html', 'app.js', 'style.css', 'views/service.js']) {
        expect(packed.files).toContain(`dist/dashboard/assets/${file}`);
      }
      const dir = await esmProject();
      fs.writeFileSync(
        path.join(dir, 'cli-provider.mjs'),
        `import { callisto, defineService } from 'callisto';
const Greeter = defineService('pkg.Greeter', { methods: { hi: {} } });
const app = await callisto({ application: 'pkg', registry: 'file://.callisto/cli-registry', logLevel: 'warn' });
app.provide(Greeter, { hi: (name) => 'hi ' + name });
await app.start();
app.handleSignals();
console.log('serving ' + app.address);
`,
      );
      const provider = startNode(dir, 'cli-provider.mjs');
      try {
        await provider.waitFor(/serving \S+:\d+/);
        const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
          version: string;
        };
        expect(await npx(dir, ['callisto', '--version'])).toBe(`${version}\n`);
        const listed = await npx(dir, ['callisto', 'ls', '--registry', 'file://.callisto/cli-registry']);
        expect(listed).toMatch(/\npkg\.Greeter\s+1\.0\.0\s+-\s+1\s+0\n/);
        const called = await npx(dir, [
          'callisto',
          'call',
          'pkg.Greeter.hi',
          '"npx"',
          '--registry',
          'file://.callisto/cli-registry',
        ]);
        expect(JSON.parse(called)).toBe('hi npx');
      } finally {
        expect(await provider.stop()).toBe(0);
      }
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'builds when installed from git (the committed HEAD), where no dist/ is committed',
    async () => {
      const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
      const dir = tempDir('callisto-git-');
      dirs.push(dir);
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'git-app', private: true }));
      await installTarball(dir, `git+file://${REPO}#${head}`);
      const root = path.join(dir, 'node_modules/callisto');
      expect(fs.existsSync(path.join(root, 'dist/index.js'))).toBe(true);
      expect(fs.existsSync(path.join(root, 'LICENSE'))).toBe(true);
      fs.writeFileSync(path.join(dir, 'check.js'), "console.log(typeof require('callisto').callisto);\n");
      expect(await node(dir, 'check.js')).toContain('function');
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'resolves every subpath under the classic Nest tsconfig (commonjs, no moduleResolution) and under nodenext, with TypeScript 5',
    async () => {
      const dir = await projectWith('callisto-nest-classic-', { name: 'nest-classic', private: true }, [
        'typescript@5',
        '@types/node@20',
      ]);
      fs.writeFileSync(path.join(dir, 'main.ts'), EVERY_SUBPATH);
      const expected = 'function function memory function test.Greeter';
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ ...NEST_CLASSIC_TSCONFIG, include: ['main.ts'] }, null, 2),
      );
      await npx(dir, ['tsc', '-p', '.']);
      expect(await node(dir, 'dist/main.js')).toContain(expected);
      const nodenext = {
        compilerOptions: {
          ...NEST_CLASSIC_TSCONFIG.compilerOptions,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          outDir: './dist-nodenext',
          incremental: false,
        },
        include: ['main.ts'],
      };
      fs.writeFileSync(path.join(dir, 'tsconfig.nodenext.json'), JSON.stringify(nodenext, null, 2));
      await npx(dir, ['tsc', '-p', 'tsconfig.nodenext.json']);
      expect(await node(dir, 'dist-nodenext/main.js')).toContain(expected);
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'installs beside the oldest supported major of the optional Redis client (ioredis 5) and registers through it',
    async () => {
      const redis = inject('redisAddress');
      expect(redis, 'the shared Redis test server (scripts/services/install.sh)').not.toBe('');
      // npm refuses (ERESOLVE) a project that has ioredis 5 when the peer range names 6 only
      const dir = await projectWith(
        'callisto-ioredis5-',
        { name: 'ioredis5', private: true, type: 'module' },
        ['ioredis@5'],
      );
      const installed = JSON.parse(
        fs.readFileSync(path.join(dir, 'node_modules/ioredis/package.json'), 'utf8'),
      ) as { version: string };
      expect(installed.version).toMatch(/^5\./);
      fs.writeFileSync(
        path.join(dir, 'redis5.mjs'),
        `import { callisto, defineService } from 'callisto';
const Greeter = defineService('pkg.Redis5Greeter', { version: '${process.pid}', methods: { hi: {} } });
const registry = 'redis://${redis}';
const provider = await callisto({ application: 'p', registry, logLevel: 'warn' });
provider.provide(Greeter, { hi: (name) => 'hi ' + name });
await provider.start();
const consumer = await callisto({ application: 'c', registry, logLevel: 'warn' });
await consumer.start();
const greeter = consumer.refer(Greeter, { timeoutMs: 5000 });
console.log(await greeter.hi('ioredis 5'));
await consumer.close();
await provider.close();
`,
      );
      expect(await node(dir, 'redis5.mjs')).toContain('hi ioredis 5');
    },
    INSTALL_TIMEOUT_MS,
  );
});
