/**
 * consumer/suspicion.ts on its own, with a scripted peer: a connection with calls waiting is pinged at
 * half of `afterMs` and suspected at `afterMs` when nothing arrives; a peer that answers its pings is
 * never suspected, however long its calls take; an idle connection is not watched at all.
 */
import { describe, expect, it } from 'vitest';
import { type SuspicionPeer, watchSilence } from '../../src/consumer/suspicion.js';
import { waitFor } from '../support/wait-for.js';

const AFTER_MS = 80;

function scriptedPeer(options: { answersPings: boolean; inFlight: number }) {
  const events: string[] = [];
  let lastReceived = Date.now();
  const peer: SuspicionPeer & { inFlightNow: number } = {
    inFlightNow: options.inFlight,
    lastReceived: () => lastReceived,
    inFlight: () => peer.inFlightNow,
    ping() {
      events.push('ping');
      if (options.answersPings) setTimeout(() => (lastReceived = Date.now()), 1);
    },
    onSuspect: (silentMs) => events.push(`suspect ${silentMs >= AFTER_MS ? 'late enough' : silentMs}`),
    onClear: () => events.push('clear'),
  };
  return { peer, events, receive: () => (lastReceived = Date.now()) };
}

/** Long enough for several suspicion periods: the window in which a wrong suspicion would show. */
const severalPeriods = () => new Promise((resolve) => setTimeout(resolve, AFTER_MS * 5));

describe('suspicion of a silent connection', () => {
  it('pings a silent connection with calls waiting, suspects it, and clears at the first frame', async () => {
    const { peer, events, receive } = scriptedPeer({ answersPings: false, inFlight: 1 });
    const watch = watchSilence(AFTER_MS, peer);
    try {
      watch.busy(Date.now());
      await waitFor(() => watch.suspected, 2_000);
      expect(events.slice(0, 2)).toEqual(['ping', 'suspect late enough']);
      receive();
      watch.heard(Date.now());
      expect(watch.suspected).toBe(false);
      expect(events).toContain('clear');
    } finally {
      watch.stop();
    }
  });

  it('never suspects a peer that answers its pings, however long the call waits', async () => {
    const { peer, events } = scriptedPeer({ answersPings: true, inFlight: 1 });
    const watch = watchSilence(AFTER_MS, peer);
    try {
      watch.busy(Date.now());
      await severalPeriods();
      expect(watch.suspected).toBe(false);
      expect(events.filter((event) => event === 'ping').length).toBeGreaterThan(0);
      expect(events.filter((event) => event.startsWith('suspect'))).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('does not watch a connection without calls, nor when turned off (0)', async () => {
    const idle = scriptedPeer({ answersPings: false, inFlight: 0 });
    const off = scriptedPeer({ answersPings: false, inFlight: 1 });
    const watches = [watchSilence(AFTER_MS, idle.peer), watchSilence(0, off.peer)];
    try {
      for (const watch of watches) watch.busy(Date.now());
      await severalPeriods();
      expect(watches.map((watch) => watch.suspected)).toEqual([false, false]);
      expect([...idle.events, ...off.events]).toEqual([]);
    } finally {
      for (const watch of watches) watch.stop();
    }
  });
});
