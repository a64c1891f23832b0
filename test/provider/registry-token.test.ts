/**
 * `server.auth.registryToken: true` over real sockets and a file registry: the provider publishes a
 * random token with its record and refuses calls without it; a consumer that found it through the
 * registry is served without configuring anything, a direct caller is refused `Unauthorized`, and a
 * restarted provider publishes a new token (its discovering consumers follow). The token is never logged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineService, type Logger } from '../../src/index.js';
import { freePort } from '../setup/free-port.js';
import { closeAll, testApp } from '../support/apps.js';
import { codeOf } from '../support/outcome-code.js';
import { waitFor } from '../support/wait-for.js';

interface Greeter {
  hello(name: string): Promise<string>;
}

const GreeterDef = defineService<Greeter>('token.Greeter', { methods: { hello: { idempotent: true } } });

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lines: string[] = [];
const logger: Logger = {
  debug: (message) => lines.push(message),
  info: (message) => lines.push(message),
  warn: (message) => lines.push(message),
  error: (message) => lines.push(message),
};

async function provider(registry: string, port = 0): Promise<CallistoApp> {
  const app = await testApp({
    application: 'token-provider',
    registry: [registry],
    server: { port, auth: { registryToken: true } },
    logger,
    logLevel: 'debug',
  });
  app.provide(GreeterDef, { hello: async (name) => `hello ${name} from ${process.pid}` });
  await app.start();
  return app;
}

const tokenOf = (app: CallistoApp): string | undefined => appInternals(app).provider.records()[0]?.token;

describe('server.auth.registryToken', () => {
  it('serves a consumer that found the provider through the registry, refuses a direct caller, rotates on restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-token-'));
    dirs.push(dir);
    const registry = `file://${dir}`;
    const first = await provider(registry, await freePort()); // restarted on this port below
    const token = tokenOf(first);
    expect(token).toMatch(/^[\w-]{24,}$/);

    const consumer = await testApp({ application: 'token-consumer', registry: [registry] });
    const discovering = consumer.refer(GreeterDef, { timeoutMs: 3000 });
    expect(await discovering.hello('a')).toMatch(/^hello a/);

    const direct = await testApp({ application: 'token-direct' });
    const ref = direct.refer(GreeterDef, { url: first.address!, retries: 0 });
    expect(await codeOf(ref.hello('b'))).toBe('Unauthorized');
    // the token itself does not help a caller that names it in its attachments without the registry
    const forged = direct.refer(GreeterDef, {
      url: first.address!,
      retries: 0,
      attachments: { 'callisto-registry-token': 'guessed-token-guessed-token' },
    });
    expect(await codeOf(forged.hello('c'))).toBe('Unauthorized');

    // restart on the same port: a new token; the discovering consumer follows the new record
    const port = first.port!;
    await first.close();
    const second = await provider(registry, port);
    const rotated = tokenOf(second);
    expect(rotated).toBeDefined();
    expect(rotated).not.toBe(token);
    await waitFor(async () => (await codeOf(discovering.hello('d'))) === 'answered', 15_000);
    // a new direct caller (the first one saw the old provider go away at that address)
    const later = await testApp({ application: 'token-direct-later' });
    expect(await codeOf(later.refer(GreeterDef, { url: second.address!, retries: 0 }).hello('e'))).toBe(
      'Unauthorized',
    );

    // never in the logs
    const all = lines.join('\n');
    expect(all).not.toContain(token!);
    expect(all).not.toContain(rotated!);
  });
});
