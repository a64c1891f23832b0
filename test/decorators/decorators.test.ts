/**
 * `@RpcService`, `@RpcReference` and `registerDecorated` (standard TC39 decorators). `npm test`
 * typechecks this file with tsc, so each `@ts-expect-error` below must stay an error: a decorated class
 * that does not implement its definition, a reference field whose type is not `Remote<T>`. The runtime
 * tests run over real connections.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import {
  callContext,
  defineService,
  type Filter,
  type Remote,
  RpcError,
  RpcReference,
  RpcService,
  registerDecorated,
} from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

interface Directory {
  lookup(id: number): Promise<string>;
}
interface Greeter {
  greet(id: number): Promise<string>;
  /** The caller's attachment `caller` and the address the call came from. */
  whoCalls(): Promise<{ caller: unknown; remote: string | undefined }>;
}

const DirectoryDef = defineService<Directory>('test.decorators.Directory', { methods: { lookup: {} } });
const GreeterDef = defineService<Greeter>('test.decorators.Greeter', {
  methods: { greet: {}, whoCalls: {} },
});

@RpcService(DirectoryDef)
class DirectoryImpl implements Directory {
  async lookup(id: number): Promise<string> {
    return `user-${id}`;
  }
}

/** A provider that is also a consumer: it greets with what the directory says. */
@RpcService(GreeterDef, { tags: { zone: 'z1' }, weight: 7 })
class GreeterImpl {
  @RpcReference(DirectoryDef) accessor directory!: Remote<Directory>;

  async greet(id: number): Promise<string> {
    return `hello ${await this.directory.lookup(id)}`;
  }

  whoCalls() {
    const context = callContext();
    return { caller: context?.attachments['caller'], remote: context?.remoteAddress };
  }
}

/** A consumer only: a field, an accessor and a private field, the last with options. */
class Frontend {
  @RpcReference(GreeterDef) greeter!: Remote<Greeter>;
  @RpcReference(DirectoryDef) accessor directory!: Remote<Directory>;
  @RpcReference(GreeterDef, { attachments: { caller: 'frontend' }, timeoutMs: 5_000 })
  #tagged!: Remote<Greeter>;

  whoCallsTagged() {
    return this.#tagged.whoCalls();
  }
}

async function startProvider() {
  const provider = await testApp({ application: 'decorated-provider' });
  const [directory, greeter] = registerDecorated(provider, [DirectoryImpl, GreeterImpl]);
  await provider.start();
  return { provider, directory, greeter, registry: [`direct://${provider.address!}`] };
}

describe('@RpcService and @RpcReference over real connections', () => {
  it('provide a decorated class and fill decorated fields, accessors and private fields with references that call it', async () => {
    const { registry, directory, greeter } = await startProvider();
    expect(directory).toBeInstanceOf(DirectoryImpl);
    expect(greeter).toBeInstanceOf(GreeterImpl);
    const consumer = await testApp({ application: 'decorated-consumer', registry });
    const [frontend] = registerDecorated(consumer, [Frontend]);
    // The provider's own reference (in-process) and the consumer's (over TCP) both work.
    expect(await frontend.greeter.greet(7)).toBe('hello user-7');
    expect(await frontend.directory.lookup(8)).toBe('user-8');
    // Over a real connection, with the options the decorator gave (an attachment on every call).
    const tagged = await frontend.whoCallsTagged();
    expect(tagged.caller).toBe('frontend');
    expect(tagged.remote).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await frontend.greeter.whoCalls()).caller).toBeUndefined();
  });

  it('announce the provide options @RpcService gave (weight, tags) in the registry record', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-decorators-'));
    try {
      const provider = await testApp({ registry: `file://${dir}` });
      registerDecorated(provider, [DirectoryImpl, GreeterImpl]);
      await provider.start();
      const record = appInternals(provider)
        .provider.records()
        .find((r) => r.service === GreeterDef.name)!;
      expect(record).toMatchObject({ weight: 7, tags: { zone: 'z1' }, methods: ['greet', 'whoCalls'] });
    } finally {
      await closeAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('give each app its own references, and provide nothing to an app the class was not given to', async () => {
    const { provider, registry } = await startProvider();
    const counted =
      (calls: string[]): Filter =>
      (next) =>
      (invocation) => {
        calls.push(invocation.method);
        return next(invocation);
      };
    const callsA: string[] = [];
    const callsB: string[] = [];
    const a = await testApp({ registry, filters: { consumer: [counted(callsA)] } });
    const b = await testApp({ registry, filters: { consumer: [counted(callsB)] } });
    const [viaA] = registerDecorated(a, [Frontend]);
    const [viaB] = registerDecorated(b, [new Frontend()]);
    expect(viaA.greeter).not.toBe(viaB.greeter);
    await viaA.greeter.greet(1);
    await viaA.directory.lookup(2);
    await viaB.greeter.greet(3);
    expect(callsA).toEqual(['greet', 'lookup']);
    expect(callsB).toEqual(['greet']);
    // An app that was never given GreeterImpl does not serve it, decorated or not.
    const other = await testApp({ application: 'other' });
    other.provide(DirectoryDef, new DirectoryImpl());
    await other.start();
    const caller = await testApp();
    const error = await caller
      .refer(GreeterDef, { url: other.address!, retries: 0 })
      .greet(1)
      .catch((e: unknown) => e);
    expect(RpcError.is(error) && error.code).toBe('ServiceNotFound');
    expect(
      appInternals(provider)
        .provider.table.list()
        .map((s) => s.definition.name),
    ).toEqual([DirectoryDef.name, GreeterDef.name]);
  });

  it('register instances (for constructors that take arguments), subclasses, and classes with several services', async () => {
    @RpcService(DirectoryDef)
    @RpcService(GreeterDef)
    class Both {
      constructor(readonly prefix: string) {}
      lookup(id: number) {
        return `${this.prefix}-${id}`;
      }
      greet(id: number) {
        return `hi ${this.prefix}-${id}`;
      }
      whoCalls() {
        return { caller: 'both', remote: undefined };
      }
    }
    class Special extends Both {
      override lookup(id: number) {
        return `special-${id}`;
      }
    }
    const first = await testApp();
    registerDecorated(first, [new Both('both')]);
    await first.start();
    const second = await testApp();
    registerDecorated(second, [new Special('x')]);
    await second.start();
    const consumer = await testApp();
    expect(await consumer.refer(DirectoryDef, { url: first.address! }).lookup(1)).toBe('both-1');
    expect(await consumer.refer(GreeterDef, { url: first.address! }).greet(2)).toBe('hi both-2');
    expect(await consumer.refer(DirectoryDef, { url: second.address! }).lookup(3)).toBe('special-3');
  });
});

describe('mistakes are clear errors', () => {
  it('a field used before its instance is registered says so', () => {
    const frontend = new Frontend();
    expect(() => frontend.greeter.greet(1)).toThrow(
      'Frontend.greeter is @RpcReference(test.decorators.Greeter:1.0.0), not bound to an app yet: give the instance (or its class) to registerDecorated(app, [...]) first',
    );
    expect(() => frontend.whoCallsTagged()).toThrow('Frontend.#tagged is @RpcReference(');
    // Not mistaken for a promise.
    expect((frontend.greeter as unknown as { then?: unknown }).then).toBeUndefined();
  });

  it('registering what is not decorated, the same instance twice, or a class that cannot be constructed', async () => {
    const app = await testApp({ registry: ['direct://127.0.0.1:9'] });
    class Plain {}
    expect(() => registerDecorated(app, [Plain])).toThrow(
      'registerDecorated(): Plain has neither @RpcService nor @RpcReference fields: nothing to register',
    );
    const frontend = new Frontend();
    registerDecorated(app, [frontend]);
    expect(() => registerDecorated(app, [frontend])).toThrow(
      'registerDecorated(): this Frontend is already registered with an app',
    );
    @RpcService(DirectoryDef)
    class NeedsArgs {
      constructor(readonly db: { find(id: number): string }) {
        if (!db) throw new TypeError('a db is required');
      }
      lookup(id: number) {
        return this.db.find(id);
      }
    }
    // @ts-expect-error: a class whose constructor takes arguments is given as an instance
    expect(() => registerDecorated(app, [NeedsArgs])).toThrow(
      'registerDecorated(): new NeedsArgs() failed (a db is required); a class whose constructor takes arguments is given as an instance',
    );
    registerDecorated(app, [DirectoryImpl]);
    expect(() => registerDecorated(app, [DirectoryImpl])).toThrow(
      'registerDecorated(): cannot provide test.decorators.Directory:1.0.0 with DirectoryImpl: service test.decorators.Directory:1.0.0 is already provided',
    );
  });

  it('a decorator given no definition, or put where it does not belong', () => {
    const missing = undefined as unknown as typeof DirectoryDef;
    expect(() => RpcService(missing)).toThrow(
      '@RpcService() needs a definition made by defineService(); got undefined (an import cycle can leave a definition undefined when a class is decorated)',
    );
    expect(() => RpcReference({ name: 'x' } as unknown as typeof DirectoryDef)).toThrow(
      '@RpcReference() needs a definition made by defineService(); got object',
    );
    expect(() => {
      @RpcService(DirectoryDef)
      @RpcService(DirectoryDef)
      class Twice {
        lookup() {
          return '';
        }
      }
      return Twice;
    }).toThrow('Twice has @RpcService(test.decorators.Directory:1.0.0) twice');
    expect(() => {
      // biome-ignore lint/complexity/noStaticOnlyClass: the mistake under test
      class Static {
        // @ts-expect-error: not on a static field
        @RpcReference(DirectoryDef) static directory: Remote<Directory>;
      }
      return Static;
    }).toThrow(
      '@RpcReference(test.decorators.Directory:1.0.0) decorates an instance field or accessor, not a static field (directory)',
    );
    expect(() => {
      class OnMethod {
        // @ts-expect-error: not on a method
        @RpcReference(DirectoryDef) lookup() {}
      }
      return OnMethod;
    }).toThrow('decorates an instance field or accessor, not a method (lookup)');
    // Legacy decorators (experimentalDecorators) call a property decorator with (prototype, key).
    const legacy = RpcReference(DirectoryDef) as unknown as (target: object, key: string) => void;
    expect(() => legacy({}, 'directory')).toThrow(
      '@RpcReference(test.decorators.Directory:1.0.0) needs standard decorators; under experimentalDecorators (NestJS) use @InjectReference() from callisto/nestjs',
    );
  });
});

describe('types', () => {
  it('a decorated class must implement its definition; a decorated field must be Remote<T> of its definition', () => {
    // @ts-expect-error: lacks greet and whoCalls
    @RpcService(GreeterDef)
    class Missing {
      lookup() {
        return '';
      }
    }
    // @ts-expect-error: greet answers a number, not a string
    @RpcService(GreeterDef)
    class WrongResult {
      greet(id: number) {
        return id;
      }
      whoCalls() {
        return { caller: 1, remote: undefined };
      }
    }
    // @ts-expect-error: lookup takes a number
    @RpcService(DirectoryDef)
    class WrongArgument {
      lookup(id: string) {
        return id;
      }
    }
    class WrongFields {
      // @ts-expect-error: a reference to Directory in a Greeter field
      @RpcReference(DirectoryDef) greeter!: Remote<Greeter>;
      // @ts-expect-error: an accessor of the wrong reference type
      @RpcReference(GreeterDef) accessor directory!: Remote<Directory>;
      // @ts-expect-error: a type that promises more than the reference has
      @RpcReference(DirectoryDef) wider!: Remote<Directory> & { extra(): void };
      // @ts-expect-error: not a reference at all
      @RpcReference(DirectoryDef) name!: string;
      // @ts-expect-error: options are typed by the definition: no such method
      @RpcReference(DirectoryDef, { methods: { lookupp: { timeoutMs: 1 } } }) other!: Remote<Directory>;
    }
    expect([Missing, WrongResult, WrongArgument, WrongFields]).toHaveLength(4);
  });
});
