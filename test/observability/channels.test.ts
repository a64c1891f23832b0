import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CHANNEL_NAMES,
  type ClientCallMessage,
  type ConnectionMessage,
  type ProtocolErrorMessage,
  type ServerCallMessage,
} from '../../src/index.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { sendGarbage } from '../support/raw-client.js';
import { waitFor } from '../support/wait-for.js';

const unsubscribers: Array<() => void> = [];
afterEach(async () => {
  for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
  await closeAll();
});

function collect<T>(name: string): T[] {
  const seen: T[] = [];
  const listener = (message: unknown) => seen.push(message as T);
  diagnosticsChannel.subscribe(name, listener);
  unsubscribers.push(() => diagnosticsChannel.unsubscribe(name, listener));
  return seen;
}

describe('diagnostics channels', () => {
  it('publish client and server calls, connections and protocol errors to whoever subscribes', async () => {
    const client = collect<ClientCallMessage>(CHANNEL_NAMES.clientCall);
    const server = collect<ServerCallMessage>(CHANNEL_NAMES.serverCall);
    const connections = collect<ConnectionMessage>(CHANNEL_NAMES.connection);
    const protocol = collect<ProtocolErrorMessage>(CHANNEL_NAMES.protocolError);

    const provider = await testApp();
    provider.provide(UserServiceDef, new UserServiceImpl());
    await provider.start();
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: provider.address!, cluster: 'failfast' });
    await users.say('x');
    await users.withdraw(5).catch(() => undefined);
    await sendGarbage(provider.address!, Buffer.from('not a frame at all, clearly'));

    expect(client).toEqual([
      expect.objectContaining({
        service: 'test.UserService',
        method: 'say',
        address: provider.address,
        error: undefined,
      }),
      expect.objectContaining({ method: 'withdraw', error: 'ProviderError' }),
    ]);
    expect(client[0]!.durationMs).toBeGreaterThan(0);
    await waitFor(() => server.length === 2);
    expect(server.map((m) => [m.method, m.error])).toEqual([
      ['say', undefined],
      ['withdraw', 'ProviderError'],
    ]);
    expect(connections).toContainEqual({ address: provider.address, event: 'open', reason: undefined });
    await waitFor(() => protocol.length === 1);
    expect(protocol[0]!.message).toMatch(/bad magic/);

    await provider.close();
    await waitFor(() => connections.some((m) => m.event === 'goaway'));
  });
});
