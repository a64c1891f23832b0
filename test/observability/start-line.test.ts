/**
 * The start-up line names every port an app listens on (RPC, HTTP entry, admin), so a person knows
 * what to open in a firewall or point a probe at without reading the configuration.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { listeningLine } from '../../src/app/listening-line.js';
import type { Logger } from '../../src/index.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

function recordingLogger(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const write = (message: string) => {
    lines.push(message);
  };
  const logger: Logger = { debug: () => {}, info: write, warn: () => {}, error: () => {} };
  return { lines, logger };
}

describe('the start-up line', () => {
  it('names the RPC address, the HTTP entry and the admin port of a provider', async () => {
    const { lines, logger } = recordingLogger();
    const app = await testApp({
      application: 'users',
      logger,
      logLevel: 'info',
      server: { http: { port: 0 } },
      admin: { enabled: true },
    });
    app.provide(UserServiceDef, new UserServiceImpl());
    await app.start();
    expect(lines).toContain(
      `users serving on ${app.address}; HTTP entry on 127.0.0.1:${app.httpPort}; admin endpoints on 127.0.0.1:${app.adminPort}`,
    );
  });

  it('names the admin port of an app that provides nothing', async () => {
    const { lines, logger } = recordingLogger();
    const app = await testApp({ application: 'web', logger, logLevel: 'info', admin: { enabled: true } });
    await app.start();
    expect(lines).toContain(`web admin endpoints on 127.0.0.1:${app.adminPort}`);
  });

  it('says nothing for an app that listens on nothing', () => {
    expect(
      listeningLine({ application: 'web', rpc: undefined, http: undefined, admin: undefined }),
    ).toBeUndefined();
  });
});
