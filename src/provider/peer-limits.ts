/**
 * What one peer may take of a provider: connections (in all, and per remote address), and a share of
 * the execution slots (`maxConcurrentCalls`) and of the budget of decoded argument elements held by
 * executing calls — per connection and per remote address — so that one client flooding a provider
 * cannot make it refuse everybody else. Every check is a few comparisons on counters kept per
 * connection, per address and in all: O(1), no allocation per call.
 */

export interface PeerLimitOptions {
  /** Connections at once, in all. */
  maxConnections: number;
  /** Connections at once from one remote address. */
  maxConnectionsPerAddress: number;
  /** Calls executing at once, in all (`maxConcurrentCalls`). */
  maxCalls: number;
  /** Decoded argument elements held by executing calls, in all. */
  maxElements: number;
  /** Share (0–1] of `maxCalls` and `maxElements` one connection may hold. */
  connectionShare: number;
  /** Share (0–1] of `maxCalls` and `maxElements` the connections of one remote address may hold together. */
  addressShare: number;
}

/** One connection's hold on the limits. */
export interface PeerSlot {
  readonly address: string;
  /** Calls this connection has executing. */
  readonly calls: number;
  /**
   * Takes an execution slot and `elements` of the element budget for one call; returns why not (the
   * message of an `Overloaded` answer), or undefined when admitted.
   */
  admit(elements: number): string | undefined;
  /** Gives back what `admit` took for one call. */
  release(elements: number): void;
  /** The connection closed: its address may open another. */
  disconnect(): void;
}

/** A hold on the limits for calls (what the admission filter takes). */
export interface CallAdmission {
  admit(elements: number): string | undefined;
  release(elements: number): void;
}

export interface PeerLimits {
  /** A new connection from `address` (without port): its slot, or why it is refused. */
  connect(address: string): PeerSlot | string;
  /**
   * The hold of one call a trusted gateway forwarded for the client at `address` (without port): it
   * takes the provider's limits and the address share of that client, not of the gateway's connection
   * (whose share would make every client behind it one bucket).
   */
  forwarded(address: string): CallAdmission;
  /** Calls executing now, in all. */
  readonly calls: number;
  /** Decoded argument elements held by executing calls now, in all. */
  readonly elements: number;
  readonly connections: number;
}

interface AddressUse {
  connections: number;
  calls: number;
  elements: number;
}

export function createPeerLimits(options: PeerLimitOptions): PeerLimits {
  const share = (fraction: number, of: number): number => Math.max(1, Math.floor(fraction * of));
  const connectionCalls = share(options.connectionShare, options.maxCalls);
  const addressCalls = share(options.addressShare, options.maxCalls);
  const connectionElements = share(options.connectionShare, options.maxElements);
  const addressElements = share(options.addressShare, options.maxElements);
  const addresses = new Map<string, AddressUse>();
  let connections = 0;
  let calls = 0;
  let elements = 0;

  class Slot implements PeerSlot {
    calls = 0;
    elements = 0;
    #closed = false;

    constructor(
      readonly address: string,
      readonly use: AddressUse,
    ) {}

    admit(charge: number): string | undefined {
      const use = this.use;
      if (calls >= options.maxCalls) {
        return `provider is executing ${calls} calls, the maximum (server.maxConcurrentCalls)`;
      }
      if (this.calls >= connectionCalls) {
        return `this connection is executing ${this.calls} calls, its share (server.connectionShare ${options.connectionShare} of ${options.maxCalls})`;
      }
      if (use.calls >= addressCalls) {
        return `${this.address} is executing ${use.calls} calls, its share (server.addressShare ${options.addressShare} of ${options.maxCalls})`;
      }
      if (elements + charge > options.maxElements) {
        return `provider holds ${elements} decoded argument elements; ${charge} more exceed server.maxElementsInFlight (${options.maxElements})`;
      }
      if (this.elements + charge > connectionElements) {
        return `this connection holds ${this.elements} decoded argument elements; ${charge} more exceed its share of server.maxElementsInFlight`;
      }
      if (use.elements + charge > addressElements) {
        return `${this.address} holds ${use.elements} decoded argument elements; ${charge} more exceed its share of server.maxElementsInFlight`;
      }
      calls++;
      this.calls++;
      use.calls++;
      elements += charge;
      this.elements += charge;
      use.elements += charge;
      return undefined;
    }

    release(charge: number): void {
      calls--;
      this.calls--;
      this.use.calls--;
      elements -= charge;
      this.elements -= charge;
      this.use.elements -= charge;
      // calls that outlived their connection: forget the address once its last one ends
      if (this.#closed && this.use.connections === 0 && this.use.calls === 0) addresses.delete(this.address);
    }

    disconnect(): void {
      if (this.#closed) return;
      this.#closed = true;
      connections--;
      if (--this.use.connections === 0 && this.use.calls === 0) addresses.delete(this.address);
    }
  }

  const forwardedFor = (address: string): CallAdmission => ({
    admit(charge) {
      if (calls >= options.maxCalls) {
        return `provider is executing ${calls} calls, the maximum (server.maxConcurrentCalls)`;
      }
      let use = addresses.get(address);
      if (use !== undefined && use.calls >= addressCalls) {
        return `${address} is executing ${use.calls} calls, its share (server.addressShare ${options.addressShare} of ${options.maxCalls})`;
      }
      if (elements + charge > options.maxElements) {
        return `provider holds ${elements} decoded argument elements; ${charge} more exceed server.maxElementsInFlight (${options.maxElements})`;
      }
      if ((use?.elements ?? 0) + charge > addressElements) {
        return `${address} holds ${use?.elements ?? 0} decoded argument elements; ${charge} more exceed its share of server.maxElementsInFlight`;
      }
      if (use === undefined) {
        use = { connections: 0, calls: 0, elements: 0 };
        addresses.set(address, use);
      }
      calls++;
      use.calls++;
      elements += charge;
      use.elements += charge;
      return undefined;
    },
    release(charge) {
      const use = addresses.get(address);
      calls--;
      elements -= charge;
      if (use === undefined) return;
      use.calls--;
      use.elements -= charge;
      if (use.connections === 0 && use.calls === 0) addresses.delete(address);
    },
  });

  return {
    forwarded: forwardedFor,
    connect(address) {
      if (connections >= options.maxConnections) {
        return `${connections} connections open, the maximum (server.maxConnections)`;
      }
      let use = addresses.get(address);
      if (use !== undefined && use.connections >= options.maxConnectionsPerAddress) {
        return `${use.connections} connections from ${address} open, the maximum per address (server.maxConnectionsPerAddress)`;
      }
      if (use === undefined) {
        use = { connections: 0, calls: 0, elements: 0 };
        addresses.set(address, use);
      }
      use.connections++;
      connections++;
      return new Slot(address, use);
    },
    get calls() {
      return calls;
    },
    get elements() {
      return elements;
    },
    get connections() {
      return connections;
    },
  };
}
