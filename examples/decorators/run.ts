/**
 * Services and references with standard (TC39) decorators, the way a Dubbo or Spring user writes them:
 * `@RpcService(definition)` on a class, `@RpcReference(definition, options)` on a field or accessor, and
 * `registerDecorated(app, [classes])` to give them to an app. Three apps in one process, each with its
 * own port, found through an embedded (file) registry in a temporary directory:
 *
 *   users     provides UserService
 *   greetings provides GreetingService, which calls UserService through a decorated accessor
 *   web       a plain class whose decorated fields call both
 *
 *   npx tsx examples/decorators/run.ts
 *
 * No `experimentalDecorators`: TypeScript 5+ and tsx (esbuild) compile these as they are.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  callisto,
  defineService,
  type Remote,
  RpcReference,
  RpcService,
  registerDecorated,
} from '../../src/index.js';
import { createRegistry } from '../../src/registry/index.js';
import { type User, type UserService, UserServiceDef } from '../contract/user-service.js';

interface GreetingService {
  greet(userId: number): Promise<string>;
}

const GreetingServiceDef = defineService<GreetingService>('example.GreetingService', {
  version: '1.0.0',
  methods: { greet: { idempotent: true } },
});

// A class that does not implement UserService (a missing method, a wrong argument or result type) does
// not compile here.
@RpcService(UserServiceDef)
class UserServiceImpl implements UserService {
  async getUser(id: number): Promise<User> {
    return { id, name: `user-${id}`, email: `user${id}@example.com`, joinedAt: new Date(1_700_000_000_000) };
  }
  async say(message: string): Promise<string> {
    return `users says ${message}`;
  }
  async whoAmI(): Promise<string> {
    return `users (pid ${process.pid})`;
  }
}

// A provider that is also a consumer: its accessor is filled when the class is registered.
@RpcService(GreetingServiceDef, { tags: { team: 'growth' } })
class GreetingServiceImpl implements GreetingService {
  @RpcReference(UserServiceDef, { timeoutMs: 1_000 }) accessor users!: Remote<UserService>;

  async greet(userId: number): Promise<string> {
    const user = await this.users.getUser(userId);
    return `Hello, ${user.name}!`;
  }
}

// A consumer only. A field typed Remote<OtherService> would not compile.
class WebController {
  @RpcReference(GreetingServiceDef) greetings!: Remote<GreetingService>;
  @RpcReference(UserServiceDef, { loadbalance: 'roundrobin', retries: 1 }) users!: Remote<UserService>;

  async page(userId: number): Promise<string> {
    const [greeting, user] = await Promise.all([this.greetings.greet(userId), this.users.getUser(userId)]);
    return `${greeting} <${user.email}> joined ${user.joinedAt.toISOString().slice(0, 10)}`;
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-decorators-'));
const options = { registry: `file://${dir}`, logLevel: 'warn', load: { configFile: false } } as const;
const users = await callisto({ ...options, application: 'users' });
const greetings = await callisto({ ...options, application: 'greetings' });
const web = await callisto({ ...options, application: 'web' });
try {
  registerDecorated(users, [UserServiceImpl]);
  await users.start();
  const [greeter] = registerDecorated(greetings, [GreetingServiceImpl]);
  await greetings.start();
  console.log(`users serving on ${users.address}, greetings on ${greetings.address}`);

  // A field used before its class is registered says what to do.
  const early = new WebController();
  try {
    await early.page(1);
  } catch (error) {
    console.log(`before registerDecorated: ${(error as Error).message}`);
  }

  const [controller] = registerDecorated(web, [WebController]);
  console.log(`web.page(7) -> ${await controller.page(7)}`);
  console.log(`greetings' own reference: ${await greeter.users.say('hi')}`);
  // What the registry holds, read as any consumer would (callisto/registry).
  const registry = await createRegistry(`file://${dir}`);
  const unsubscribe = await registry.subscribe(GreetingServiceDef, (records) => {
    for (const record of records) {
      console.log(`registered ${record.service} with tags ${JSON.stringify(record.tags)}`);
    }
  });
  unsubscribe();
  await registry.close();
} finally {
  await web.close();
  await greetings.close();
  await users.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log('closed');
}
