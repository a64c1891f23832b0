/**
 * examples/nestjs as a Nest user gets it: a copy of the project in a temporary directory, the packed
 * package installed there with Nest 12 and the rest of its package.json (from the npm cache when there),
 * built with the project's own TypeScript the way Nest projects build by default (CommonJS, legacy
 * decorators with emitDecoratorMetadata, tsc), then run as separate processes over a file registry:
 * the provider application, the HTTP consumer application, the one-shot consumer, and shutdown by
 * SIGTERM (enableShutdownHooks) and by app.close().
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { type Background, installTarball, node, npm, pack, REPO, startNode, tempDir } from './project.js';

const EXAMPLE = path.join(REPO, 'examples/nestjs');
/** Installs and builds take seconds each, more on a loaded machine: generous, npm bounds each step itself. */
const SETUP_TIMEOUT_MS = 240_000;
const RUN_TIMEOUT_MS = 60_000;
/**
 * `CALLISTO_TEST_NEST=11` runs this against another Nest major (the peer range allows 11 and 12); by
 * default, the example's own (12).
 */
const NEST_MAJOR = process.env['CALLISTO_TEST_NEST'];

let dir: string;
const dirs: string[] = [];
const started: Background[] = [];

beforeAll(async () => {
  const out = tempDir('callisto-nest-pack-');
  dirs.push(out);
  const { tarball } = await pack(out);
  dir = tempDir('callisto-nest-app-');
  dirs.push(dir);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src']) {
    fs.cpSync(path.join(EXAMPLE, entry), path.join(dir, entry), { recursive: true });
  }
  if (NEST_MAJOR) {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const name of ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express']) {
      manifest.dependencies[name] = `^${NEST_MAJOR}.0.0`;
    }
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  }
  // Under legacy decorators too, @RpcService accepts only a class that implements the definition: the
  // build fails ("Unused '@ts-expect-error' directive") if this class compiles.
  fs.writeFileSync(
    path.join(dir, 'src/typing-check.ts'),
    [
      "import { Injectable } from '@nestjs/common';",
      "import { RpcService } from 'callisto';",
      "import { UserServiceDef } from './contract';",
      '',
      '// @ts-expect-error: greet is missing',
      '@RpcService(UserServiceDef)',
      '@Injectable()',
      'export class NotAUserService {',
      '  async getUser(id: number) {',
      "    return { id, name: 'x', joinedAt: new Date() };",
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  // package.json's dependencies (Nest, TypeScript, @types/node) and the packed package.
  await installTarball(dir, tarball);
  await npm(dir, ['run', 'build']).catch((error: { stdout?: string; message: string }) => {
    throw new Error(`npm run build failed: ${error.message}\n${error.stdout ?? ''}`);
  });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(started.map((process) => process.stop()));
  for (const each of dirs) fs.rmSync(each, { recursive: true, force: true });
});

function start(file: string, env?: Record<string, string>): Background {
  const background = startNode(dir, file, { env });
  started.push(background);
  return background;
}

/** The provider's registration in the file registry. */
const registration = (address: string) =>
  path.join(dir, '.callisto/registry/callisto/example.UserService:1.0.0/providers', `${address}.json`);

async function startProvider(
  file = 'dist/provider/main.js',
): Promise<{ provider: Background; address: string }> {
  const provider = start(file);
  const out = await provider.waitFor(/provider serving on (\S+:\d+)/);
  const address = /provider serving on (\S+:\d+)/.exec(out)![1]!;
  await waitFor(() => fs.existsSync(registration(address)), 10_000, { message: 'provider not registered' });
  return { provider, address };
}

/** Resolves when the process has exited, with its code and signal; fails after `timeoutMs`. */
function exitOf(
  background: Background,
  timeoutMs = 20_000,
): Promise<{ code: number | null; signal: string | null }> {
  const { child } = background;
  const exited = () => ({ code: child.exitCode, signal: child.signalCode });
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(exited());
  return waitFor(
    () => (child.exitCode !== null || child.signalCode !== null ? exited() : undefined),
    timeoutMs,
    {
      message: `the process did not exit:\n${background.output()}`,
    },
  );
}

describe('examples/nestjs: Nest applications with the packed package', () => {
  it(
    'is built as Nest builds a project: CommonJS, legacy decorators with their metadata, tsc; the declarations check',
    async () => {
      const rpc = fs.readFileSync(path.join(dir, 'dist/provider/users.rpc.js'), 'utf8');
      expect(rpc).toContain('require("callisto")');
      expect(rpc).toContain('(0, callisto_1.RpcService)(contract_1.UserServiceDef)');
      expect(rpc).toContain('__metadata("design:paramtypes", [greeting_service_1.GreetingService])');
      expect(fs.readFileSync(path.join(dir, 'dist/consumer/profile.service.js'), 'utf8')).toContain(
        'require("callisto/nestjs")',
      );
      expect(fs.existsSync(path.join(dir, 'dist/typing-check.js'))).toBe(true);
      const nest = JSON.parse(
        fs.readFileSync(path.join(dir, 'node_modules/@nestjs/core/package.json'), 'utf8'),
      );
      expect(nest.version.split('.')[0]).toBe(NEST_MAJOR ?? '12');
      // The declarations of the main entry point and of every module of the subpath check (the project's
      // skipLibCheck would hide a broken one).
      fs.writeFileSync(
        path.join(dir, 'tsconfig.declarations.json'),
        JSON.stringify({
          extends: './tsconfig.json',
          compilerOptions: { skipLibCheck: false, noEmit: true, incremental: false },
          include: [
            'node_modules/callisto/dist/index.d.ts',
            'node_modules/callisto/dist/nestjs/*.d.ts',
            'node_modules/callisto/dist/decorators/*.d.ts',
          ],
        }),
      );
      await npm(dir, ['exec', '--', 'tsc', '-p', 'tsconfig.declarations.json']).catch(
        (error: { stdout?: string }) => {
          throw new Error(`the declarations do not check:\n${error.stdout ?? ''}`);
        },
      );
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'serves a method that uses an injected Nest service to a Nest HTTP app calling it through an injected reference; the one-shot consumer closes and exits',
    async () => {
      await startProvider();
      const consumer = start('dist/consumer/main.js', { PORT: '0' });
      const out = await consumer.waitFor(/consumer listening on (http:\/\/\S+);/);
      const url = /consumer listening on (http:\/\/\S+);/.exec(out)![1]!;
      const ok = await fetch(`${url}/users/7`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({
        name: 'user-7',
        joinedAt: '2023-11-14T22:13:20.000Z',
        greeting: "Hello, user-7! (from the provider's GreetingService)",
      });
      // The provider's business error arrives with its name, and the Nest service maps it.
      const missing = await fetch(`${url}/users/0`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ message: 'no user 0' });
      // app.close() on a consumer: its process ends by itself.
      const once = await node(dir, 'dist/consumer/once.js', ['9']);
      expect(once).toContain('profile: {"name":"user-9"');
      expect(once).toContain('consumer closed');
      consumer.child.kill('SIGTERM');
      expect(await exitOf(consumer)).toMatchObject({ signal: 'SIGTERM' });
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'on SIGTERM (enableShutdownHooks) unregisters the provider, closes, and the process exits',
    async () => {
      const { provider, address } = await startProvider();
      provider.child.kill('SIGTERM');
      // Nest re-raises the signal once its shutdown (Callisto's close among it) is done.
      expect(await exitOf(provider)).toEqual({ code: null, signal: 'SIGTERM' });
      expect(fs.existsSync(registration(address))).toBe(false);
      expect(provider.output()).not.toMatch(/error/i);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'on app.close() unregisters the provider and closes, and the process exits by itself',
    async () => {
      fs.writeFileSync(
        path.join(dir, 'close-provider.js'),
        [
          "const { NestFactory } = require('@nestjs/core');",
          "const { CALLISTO_APP } = require('callisto/nestjs');",
          "const { ProviderModule } = require('./dist/provider/provider.module');",
          'async function main() {',
          '  const app = await NestFactory.createApplicationContext(ProviderModule, { logger: false });',
          "  console.log('provider serving on ' + app.get(CALLISTO_APP).address);",
          "  process.stdin.once('data', async () => {",
          '    process.stdin.destroy();',
          '    await app.close();',
          "    console.log('closed');",
          '  });',
          '}',
          'main();',
          '',
        ].join('\n'),
      );
      const { provider, address } = await startProvider('close-provider.js');
      provider.child.stdin!.write('close\n');
      // Nothing left open (server, connections, registry timers): no exit call, no signal.
      expect(await exitOf(provider)).toEqual({ code: 0, signal: null });
      expect(provider.output()).toContain('closed');
      expect(fs.existsSync(registration(address))).toBe(false);
    },
    RUN_TIMEOUT_MS,
  );
});
