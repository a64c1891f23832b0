/**
 * Suspicion of a silent connection, at its first missed heartbeat. The heartbeat (protocol/heartbeat.ts)
 * gives a peer up after `missedLimit` intervals of silence (90 s with the defaults): far too late for a
 * call with a 3 s deadline. This watch runs only while calls wait on the connection (or while it is
 * suspected): after `afterMs / 2` with nothing received it sends a ping, which a live provider answers at
 * once however long its handlers run; after `afterMs` with still nothing, the connection is *suspected*:
 * the pool gives it no new attempt, and its waiting idempotent attempts fail `Network` so the cluster
 * retries them elsewhere within their deadline (a non-idempotent one keeps waiting: it may be running).
 * The first frame from the peer clears the suspicion. A suspected connection is pinged every
 * `afterMs / 2`, so a link that heals is seen at once.
 *
 * Like the heartbeat, it does not hold this process's own stalls against the peer: when its timer fires
 * late, the silence is counted from now; and before suspecting it lets pending reads run (setImmediate),
 * so bytes that arrived while this process was busy are seen first.
 */

export interface SuspicionPeer {
  /** When a frame last arrived (ms, Date.now clock). */
  lastReceived(): number;
  /** Calls waiting for an answer. */
  inFlight(): number;
  ping(): void;
  /** The connection is suspected: `silentMs` with nothing received while calls waited. */
  onSuspect(silentMs: number): void;
  /** Something arrived from a suspected connection. */
  onClear(): void;
}

export interface SuspicionWatch {
  readonly suspected: boolean;
  /** A call was sent (cheap: starts the watch when it is not running). */
  busy(now: number): void;
  /** A frame arrived. */
  heard(now: number): void;
  stop(): void;
}

/** A watch that never suspects (`afterMs` 0: suspicion off). */
const OFF: SuspicionWatch = { suspected: false, busy() {}, heard() {}, stop() {} };

export function watchSilence(afterMs: number, peer: SuspicionPeer): SuspicionWatch {
  if (afterMs <= 0) return OFF;
  const period = Math.max(10, Math.floor(afterMs / 4));
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let suspected = false;
  /** Silence is not counted before this (the watch started, or this process stalled). */
  let quietFrom = 0;
  let lastTick = 0;
  let pingedAt = 0;
  let deciding = false;

  const silence = (now: number): number => now - Math.max(peer.lastReceived(), quietFrom);
  /**
   * Silent for `afterMs`, and a ping sent at least `afterMs / 2` ago still unanswered: the pong gets
   * that long whatever the timer's granularity, so a loaded machine's slow round trip is not a silence.
   */
  const unanswered = (now: number): boolean =>
    silence(now) >= afterMs &&
    pingedAt > 0 &&
    now - pingedAt >= afterMs / 2 &&
    peer.lastReceived() < pingedAt;

  const decide = (): void => {
    deciding = false;
    if (stopped || suspected || peer.inFlight() === 0) return;
    const now = Date.now();
    if (!unanswered(now)) return;
    suspected = true;
    peer.onSuspect(silence(now));
  };

  const tick = (): void => {
    const now = Date.now();
    const late = now - lastTick - period;
    lastTick = now;
    if (late > period) quietFrom = now; // this process stalled: whatever came may still be unread
    if (!suspected && peer.inFlight() === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    // One ping at a time until suspected (its answer is what is waited for), then one per afterMs / 2
    // to see the link heal.
    const outstanding = pingedAt > 0 && peer.lastReceived() < pingedAt;
    if (silence(now) >= afterMs / 2 && (!outstanding || (suspected && now - pingedAt >= afterMs / 2))) {
      pingedAt = now;
      peer.ping();
    }
    if (!suspected && !deciding && unanswered(now)) {
      deciding = true;
      setImmediate(decide);
    }
  };

  return {
    get suspected() {
      return suspected;
    },
    busy(now) {
      if (timer !== undefined || stopped) return;
      // Calls that ended (timed out) with nothing heard do not end the silence: it goes on counting.
      if (peer.lastReceived() >= quietFrom) quietFrom = now;
      lastTick = now;
      timer = setInterval(tick, period);
      timer.unref();
    },
    heard(now) {
      if (!suspected) return;
      suspected = false;
      quietFrom = now;
      peer.onClear();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
