import { describe, expect, it } from 'vitest';
import { createPeerLimits, type PeerSlot } from './peer-limits.js';

const options = {
  maxConnections: 4,
  maxConnectionsPerAddress: 2,
  maxCalls: 10,
  maxElements: 1_000,
  connectionShare: 0.5,
  addressShare: 0.8,
};

const slot = (value: PeerSlot | string): PeerSlot => {
  if (typeof value === 'string') throw new Error(value);
  return value;
};

describe('peer limits', () => {
  it('caps connections per address and in all', () => {
    const limits = createPeerLimits(options);
    const a1 = slot(limits.connect('a'));
    slot(limits.connect('a'));
    expect(limits.connect('a')).toMatch(
      /from a open, the maximum per address \(server.maxConnectionsPerAddress\)/,
    );
    slot(limits.connect('b'));
    slot(limits.connect('c'));
    expect(limits.connect('d')).toMatch(/server.maxConnections/);
    a1.disconnect();
    a1.disconnect(); // idempotent
    expect(limits.connections).toBe(3);
    slot(limits.connect('d'));
  });

  it('gives a connection its share of the slots and an address its share across its connections', () => {
    const limits = createPeerLimits(options);
    const a1 = slot(limits.connect('a'));
    const a2 = slot(limits.connect('a'));
    const b = slot(limits.connect('b'));
    for (let i = 0; i < 5; i++) expect(a1.admit(1)).toBeUndefined();
    expect(a1.admit(1)).toMatch(/this connection is executing 5 calls, its share/);
    for (let i = 0; i < 3; i++) expect(a2.admit(1)).toBeUndefined();
    expect(a2.admit(1)).toMatch(/a is executing 8 calls, its share \(server.addressShare/);
    expect(b.admit(1)).toBeUndefined();
    expect(b.admit(1)).toBeUndefined();
    expect(limits.calls).toBe(10);
    a1.release(1);
    expect(b.admit(1)).toBeUndefined(); // the provider's maximum is the last line
    expect(b.admit(1)).toMatch(/maximum \(server.maxConcurrentCalls\)/);
  });

  it('shares the decoded-elements budget the same way, and gives it back', () => {
    const limits = createPeerLimits(options);
    const a = slot(limits.connect('a'));
    expect(a.admit(400)).toBeUndefined();
    expect(a.admit(200)).toMatch(/maxElementsInFlight/);
    a.release(400);
    expect(limits.elements).toBe(0);
    expect(a.admit(500)).toBeUndefined();
  });

  it('forgets an address once its last connection is gone and its last call ended', () => {
    const limits = createPeerLimits({ ...options, maxConnectionsPerAddress: 1 });
    const a = slot(limits.connect('a'));
    expect(a.admit(10)).toBeUndefined();
    a.disconnect();
    // the call outlives its connection: a new connection from `a` still sees it
    const again = slot(limits.connect('a'));
    again.disconnect();
    a.release(10);
    expect(limits.calls).toBe(0);
    const fresh = slot(limits.connect('a'));
    for (let i = 0; i < 5; i++) expect(fresh.admit(1)).toBeUndefined();
  });

  it('charges a forwarded call to its client address and the provider, not to the gateway connection', () => {
    const limits = createPeerLimits({ ...options, addressShare: 0.3 });
    const gateway = slot(limits.connect('gw'));
    const a = limits.forwarded('a');
    const b = limits.forwarded('b');
    for (let i = 0; i < 3; i++) expect(a.admit(1)).toBeUndefined();
    expect(a.admit(1)).toMatch(/a is executing 3 calls, its share/);
    for (let i = 0; i < 3; i++) expect(b.admit(1)).toBeUndefined();
    expect(gateway.calls).toBe(0);
    expect(limits.calls).toBe(6);
    expect(limits.forwarded('c').admit(400)).toMatch(
      /c holds 0 decoded argument elements; 400 more exceed its share/,
    );
    for (let i = 0; i < 3; i++) a.release(1);
    expect(limits.forwarded('a').admit(1)).toBeUndefined();
    expect(limits.calls).toBe(4);
  });
});
