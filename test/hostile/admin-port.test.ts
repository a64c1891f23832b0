/**
 * Hostile clients against the admin port of a provider process: idle and half-open connections from
 * other addresses must not lock out `/health` (a failed liveness probe restarts the process). The admin
 * port caps connections per address (`admin.maxConnectionsPerAddress`) and closes a connection that
 * sends no headers within `admin.headersTimeoutMs`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { holdConnections, releaseConnections, request } from './support/http-peers.js';
import { killTargets, startProviderTarget } from './support/targets.js';

afterEach(async () => {
  releaseConnections();
  await killTargets();
});

describe('hostile: the admin port', () => {
  it('96 idle sockets from 127.0.0.2 and 32 half-sent requests from 127.0.0.3 leave /health answering 127.0.0.1', async () => {
    const headersTimeoutMs = 3_000;
    const target = await startProviderTarget({ admin: { enabled: true, headersTimeoutMs } });
    const port = Number(await target.ask('admin', 'ADMIN'));
    const holding = performance.now();
    const idle = await holdConnections(port, 96, '127.0.0.2');
    const halfSent = await holdConnections(port, 32, '127.0.0.3', 'GET /health HTTP/1.1\r\nhost: x\r\n');
    // within its (probe's) timeout, while they hold their connections
    const started = performance.now();
    const health = await request(`http://127.0.0.1:${port}/health`, { timeoutMs: 2_000 });
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
    // each address got at most its share; the rest was closed as it arrived: long before the headers
    // timeout could close anything (on a loaded machine the peers may see the closes a little late)
    const open = (sockets: typeof idle) => sockets.filter((socket) => !socket.destroyed).length;
    await waitFor(() => open(idle) <= 8 && open(halfSent) <= 8, headersTimeoutMs - 500, {
      message: 'connections beyond 8 per address closed as they arrived',
    });
    expect(performance.now() - holding).toBeLessThan(headersTimeoutMs);
    // and what they hold is closed once admin.headersTimeoutMs passes without headers
    await waitFor(() => [...idle, ...halfSent].every((socket) => socket.destroyed), 8_000, {
      message: 'idle admin connections closed after headersTimeoutMs',
    });
    expect((await request(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });
});
