/**
 * A connection that could not be, standing in for one: every call is rejected with the error that
 * explains why (never sent, so any method may be tried elsewhere). The pool hands it out when opening
 * a connection threw (e.g. `net.connect` refusing a port), or while it waits before the next attempt.
 */
import type { RpcError } from '../core/rpc-error.js';
import type { ClientConnection } from './connection.js';

export function createFailedConnection(address: string, error: RpcError): ClientConnection {
  return {
    address,
    state: { kind: 'closed', error, local: false },
    inFlight: 0,
    openStreams: 0,
    suspected: false,
    lastActivity: 0,
    lastCallAt: 0,
    heartbeatRttMs: 0,
    ready: () => Promise.reject(error),
    send: (call) => call.failed(error),
    call: () => Promise.reject(error),
    ping() {},
    close: () => Promise.resolve(),
    destroy() {},
  };
}
