/**
 * One provider process of the demo. Registers on the registry named by CALLISTO_REGISTRY, prints
 * `READY <address>` when serving, and shuts down gracefully on SIGTERM, or when the demo that started it
 * goes (its stdin, a pipe from the demo, ends).
 */
import { callisto } from '../../src/index.js';
import { type User, type UserService, UserServiceDef } from '../contract/user-service.js';

const name = process.env.PROVIDER_NAME ?? `provider-${process.pid}`;

class UserServiceImpl implements UserService {
  async getUser(id: number): Promise<User> {
    return {
      id,
      name: `user-${id}`,
      email: `user${id}@example.com`,
      joinedAt: new Date(Date.UTC(2024, 0, 1 + (id % 28))),
    };
  }
  async say(message: string): Promise<string> {
    return `${name} says: hello ${message}`;
  }
  async whoAmI(): Promise<string> {
    return name;
  }
}

const app = await callisto({ application: name, logLevel: 'warn' });
app.provide(UserServiceDef, new UserServiceImpl());
await app.start();
app.handleSignals();
if (process.env.DEMO_LIFELINE) {
  // The demo holds our stdin open: when the demo goes, however it ends, stdin ends and we shut down too.
  process.stdin.once('end', () => void app.close().finally(() => process.exit(0)));
  process.stdin.resume();
}
console.log(`READY ${app.address}`);
