/**
 * `callisto/nestjs` in real Nest application contexts (Nest 12, this repository's dev dependencies),
 * over real connections and a file registry. This repository compiles with standard decorators, where
 * Nest's legacy decorators do not apply as syntax: the classes below call them as functions, which is
 * what `@Injectable()` / `@Inject(token)` compile to. test/package/nestjs.test.ts builds a Nest project
 * the way Nest users do (legacy decorator syntax, CommonJS, tsc) with the packed package.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type INestApplicationContext, Inject, Injectable, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AppOptions,
  type CallistoApp,
  callContext,
  defineService,
  type Remote,
  RpcService,
} from '../../src/index.js';
import { CALLISTO_APP, CallistoModule, getReferenceToken, InjectReference } from '../../src/nestjs/index.js';
import { waitFor } from '../support/wait-for.js';

interface Profile {
  show(id: number): Promise<{ text: string; via: string | undefined }>;
  hold(): Promise<string>;
}
const ProfileDef = defineService<Profile>('test.nest.Profile', { methods: { show: {}, hold: {} } });
/** A definition without declared methods: its reference answers any name. */
interface Loose {
  echo(text: string): Promise<string>;
}
const LooseDef = defineService<Loose>('test.nest.Loose');

const QUIET: AppOptions = { logLevel: 'silent', load: { configFile: false, env: false } };
const contexts: INestApplicationContext[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function registryDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-nest-'));
  dirs.push(dir);
  return dir;
}

/** What `@Injectable()` and constructor parameter decorators compile to. */
function injectable<T extends Type>(type: T, ...tokens: unknown[]): T {
  Injectable()(type);
  for (const [index, token] of tokens.entries()) Inject(token as string)(type, undefined, index);
  return type;
}

function nestModule(metadata: Parameters<typeof Module>[0]): Type {
  const type = class TestModule {};
  Module(metadata)(type);
  return type;
}

async function start(module: Type): Promise<INestApplicationContext> {
  const context = await NestFactory.createApplicationContext(module, { logger: false, abortOnError: false });
  contexts.push(context);
  return context;
}

/** A plain Nest service the RPC service depends on; it records the lifecycle it sees. */
class Greeting {
  readonly events: string[] = [];
  closed = false;
  app?: CallistoApp;
  phrase(name: string): string {
    if (this.closed) throw new Error('Greeting used after onApplicationShutdown');
    return `Hello, ${name}`;
  }
  onModuleInit() {
    this.events.push(`onModuleInit: callisto ${this.app?.state}`);
  }
  onApplicationBootstrap() {
    this.events.push(`onApplicationBootstrap: callisto ${this.app?.state}`);
  }
  onModuleDestroy() {
    this.events.push(`onModuleDestroy: callisto ${this.app?.state}`);
  }
  onApplicationShutdown() {
    this.events.push(`onApplicationShutdown: callisto ${this.app?.state}`);
    this.closed = true;
  }
}
injectable(Greeting);
Inject(CALLISTO_APP)(Greeting.prototype, 'app');

/** The RPC service: a Nest provider with a Nest dependency, exposed through forFeature. */
class ProfileRpc {
  release?: () => void;
  constructor(readonly greeting: Greeting) {}
  show(id: number) {
    return { text: `${this.greeting.phrase(`user-${id}`)}!`, via: callContext()?.remoteAddress };
  }
  async hold() {
    await new Promise<void>((resolve) => {
      this.release = resolve;
    });
    return this.greeting.phrase('held');
  }
}
injectable(ProfileRpc, Greeting);
RpcService(ProfileDef)(ProfileRpc);

class LooseRpc {
  calls: string[] = [];
  echo(text: string) {
    this.calls.push(`echo ${text}`);
    return `${text} with ${String(callContext()?.attachments['tag'])}`;
  }
  // Nest calls its hooks on this provider itself; a call through a reference would say where it came from.
  onModuleInit() {
    this.calls.push(`onModuleInit from ${callContext()?.remoteAddress ?? 'nest'}`);
  }
  onApplicationBootstrap() {
    this.calls.push(`onApplicationBootstrap from ${callContext()?.remoteAddress ?? 'nest'}`);
  }
}
injectable(LooseRpc);
RpcService(LooseDef)(LooseRpc);

/**
 * The provider application. `split`: the RPC classes live in a module of their own (with Greeting from
 * another), while the root module imports forFeature(); else all in one module.
 */
function providerModule(registry: string, layout: 'split' | 'one' = 'one'): Type {
  const root = CallistoModule.forRoot({ ...QUIET, application: 'nest-provider', registry });
  const feature = CallistoModule.forFeature({ services: [ProfileRpc, LooseRpc] });
  if (layout === 'one') {
    return nestModule({ imports: [root, feature], providers: [Greeting, ProfileRpc, LooseRpc] });
  }
  const greetings = nestModule({ providers: [Greeting], exports: [Greeting] });
  const rpc = nestModule({ imports: [greetings], providers: [ProfileRpc, LooseRpc] });
  return nestModule({ imports: [root, rpc, feature] });
}

/** The consumer side: a Nest service that calls through injected references. */
class ProfileClient {
  constructor(
    readonly profiles: Remote<Profile>,
    readonly loose: Remote<Loose>,
  ) {}
}
injectable(ProfileClient);
InjectReference(ProfileDef)(ProfileClient, undefined, 0);
InjectReference(LooseDef)(ProfileClient, undefined, 1);

function consumerModule(registry: string): Type {
  return nestModule({
    imports: [
      CallistoModule.forRootAsync({
        useFactory: (application: string) => ({ ...QUIET, application, registry }),
        inject: ['APPLICATION_NAME'],
        imports: [
          nestModule({
            providers: [{ provide: 'APPLICATION_NAME', useValue: 'nest-consumer' }],
            exports: ['APPLICATION_NAME'],
          }),
        ],
      }),
      CallistoModule.forFeature({
        references: [ProfileDef, { definition: LooseDef, options: { attachments: { tag: 'from-options' } } }],
      }),
    ],
    providers: [ProfileClient],
  });
}

const providerFile = (dir: string, app: CallistoApp) =>
  path.join(dir, 'callisto', `${ProfileDef.name}:${ProfileDef.version}`, 'providers', `${app.address}.json`);

describe('CallistoModule in Nest application contexts', () => {
  it('serves a Nest-built provider (with its own Nest dependency) to a Nest consumer through injected references, over TCP', async () => {
    const dir = registryDir();
    const registry = `file://${dir}`;
    const provider = await start(providerModule(registry, 'split'));
    const providerApp = provider.get<CallistoApp>(CALLISTO_APP);
    expect(providerApp.state).toBe('running');
    expect(fs.existsSync(providerFile(dir, providerApp))).toBe(true);
    // The instance Nest built (with its Greeting) is the one serving.
    expect(provider.get(ProfileRpc).greeting).toBe(provider.get(Greeting));

    const consumer = await start(consumerModule(registry));
    const client = consumer.get(ProfileClient);
    expect(consumer.get<CallistoApp>(CALLISTO_APP).config.application).toBe('nest-consumer');
    const answer = await client.profiles.show(7);
    expect(answer.text).toBe('Hello, user-7!');
    expect(answer.via).toMatch(/^127\.0\.0\.1:\d+$/); // a remote call, not in-process
    expect(await client.loose.echo('x')).toBe('x with from-options');
    // Nest called no lifecycle hook through the reference to the definition without declared methods.
    expect(provider.get(LooseRpc).calls).toEqual([
      'onModuleInit from nest',
      'onApplicationBootstrap from nest',
      'echo x',
    ]);
    expect(consumer.get(getReferenceToken(ProfileDef))).toBe(client.profiles);
  });

  it('starts Callisto after every onModuleInit, and on close drains calls in progress before Nest services shut down, then unregisters and stops listening', async () => {
    const dir = registryDir();
    const provider = await start(providerModule(`file://${dir}`));
    const app = provider.get<CallistoApp>(CALLISTO_APP);
    const greeting = provider.get(Greeting);
    const consumer = await start(consumerModule(`file://${dir}`));
    const client = consumer.get(ProfileClient);

    const held = client.profiles.hold();
    const rpc = provider.get(ProfileRpc);
    await waitFor(() => rpc.release !== undefined, 10_000);
    const closing = provider.close();
    // Unregistered at once, while the call is still in progress.
    await waitFor(() => !fs.existsSync(providerFile(dir, app)), 10_000, { message: 'still registered' });
    expect(app.state).toBe('stopping');
    expect(greeting.closed).toBe(false);
    rpc.release!();
    expect(await held).toBe('Hello, held');
    await closing;
    expect(app.state).toBe('closed');
    expect(greeting.events).toEqual([
      'onModuleInit: callisto created',
      'onApplicationBootstrap: callisto running',
      'onModuleDestroy: callisto running',
      'onApplicationShutdown: callisto closed',
    ]);
    const port = Number(app.address?.split(':')[1] ?? app.port);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    contexts.splice(contexts.indexOf(provider), 1);
  });
});

describe('mistakes', () => {
  it('a service class without @RpcService, or listed twice as a reference, fails at forFeature()', () => {
    class Plain {}
    expect(() => CallistoModule.forFeature({ services: [Plain] })).toThrow(
      'CallistoModule.forFeature(): Plain has no @RpcService(definition): decorate the class with the service it implements',
    );
    expect(() => CallistoModule.forFeature({ references: [ProfileDef, { definition: ProfileDef }] })).toThrow(
      'CallistoModule.forFeature(): references lists test.nest.Profile:1.0.0 twice',
    );
    expect(() => CallistoModule.forFeature({ references: [undefined as never] })).toThrow(
      'CallistoModule.forFeature() references needs a definition made by defineService(); got undefined',
    );
  });

  it('a listed service class that is no provider of any module fails the bootstrap, saying what to add', async () => {
    const module = nestModule({
      imports: [CallistoModule.forRoot({ ...QUIET }), CallistoModule.forFeature({ services: [ProfileRpc] })],
      providers: [Greeting],
    });
    await expect(start(module)).rejects.toThrow(
      'CallistoModule.forFeature(): ProfileRpc is listed in services but Nest has no instance of it: add it to the providers of a module (the one that imports this forFeature())',
    );
  });

  it('handleSignals is refused (Nest owns the signals), and a reference forFeature() did not list is named by Nest', async () => {
    const withSignals = nestModule({ imports: [CallistoModule.forRoot({ ...QUIET, handleSignals: true })] });
    await expect(start(withSignals)).rejects.toThrow(
      'invalid configuration: handleSignals = true: Nest closes the Callisto app on app.close(); for SIGTERM/SIGINT call app.enableShutdownHooks() instead; expected false under NestJS',
    );
    const unlisted = nestModule({
      imports: [CallistoModule.forRoot({ ...QUIET, registry: 'direct://127.0.0.1:9' })],
      providers: [ProfileClient],
    });
    await expect(start(unlisted)).rejects.toThrow(/callisto:reference:test\.nest\.Profile:1\.0\.0/);
  });

  it('a definition that declares a method named like a Nest hook cannot be injected', async () => {
    interface Hooked {
      onModuleInit(): Promise<void>;
    }
    const HookedDef = defineService<Hooked>('test.nest.Hooked', { methods: { onModuleInit: {} } });
    const module = nestModule({
      imports: [
        CallistoModule.forRoot({ ...QUIET, registry: 'direct://127.0.0.1:9' }),
        CallistoModule.forFeature({ references: [HookedDef] }),
      ],
    });
    await expect(start(module)).rejects.toThrow(
      'test.nest.Hooked:1.0.0 declares onModuleInit: Nest calls a method of that name on every provider as a lifecycle hook, so its reference cannot be injected; rename the method',
    );
  });
});
