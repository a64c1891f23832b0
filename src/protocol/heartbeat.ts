/**
 * Idle detection shared by both ends of a connection. Every `intervalMs` it checks when a frame was
 * last received: idle for one interval -> send a heartbeat; silent for `timeoutMs` (checked at each
 * interval, so given up at the first check at or after it) -> the peer is dead. The check tolerates a busy event loop: when the timer itself fires late (this process
 * was blocked), the silence is not held against the peer and the clock restarts.
 */
export interface HeartbeatOptions {
  /** Interval between checks; a heartbeat is sent when idle this long. Default 30000. */
  intervalMs: number;
  /** Silence after which the peer is declared dead, ms; at least 2 intervals. Default 3 intervals. */
  timeoutMs: number;
}

/** Intervals of silence after which a peer is given up when no `heartbeatTimeoutMs` is configured. */
export const DEFAULT_HEARTBEAT_MISSED_LIMIT = 3;
/** The smallest `heartbeatTimeoutMs`, in intervals: one missed ping is never enough. */
export const MIN_HEARTBEAT_TIMEOUT_INTERVALS = 2;

export const DEFAULT_HEARTBEAT_OPTIONS: HeartbeatOptions = {
  intervalMs: 30_000,
  timeoutMs: 30_000 * DEFAULT_HEARTBEAT_MISSED_LIMIT,
};

export interface HeartbeatMonitor {
  /** Records that a frame arrived (at `now`, Date.now() by default). */
  touch(now?: number): void;
  /** When a frame last arrived (ms). */
  readonly lastReceived: number;
  stop(): void;
}

export function startHeartbeat(
  options: HeartbeatOptions,
  sendPing: () => void,
  onDead: (silentMs: number) => void,
): HeartbeatMonitor {
  let lastReceived = Date.now();
  let lastTick = lastReceived;
  const timer = setInterval(() => {
    const now = Date.now();
    const lag = now - lastTick - options.intervalMs;
    lastTick = now;
    if (lag > options.intervalMs / 2) {
      // We were blocked; whatever the peer sent may still be unread in the socket.
      lastReceived = now;
      return;
    }
    const silent = now - lastReceived;
    if (silent >= options.timeoutMs) onDead(silent);
    else if (silent >= options.intervalMs - 5) sendPing();
  }, options.intervalMs);
  timer.unref();
  return {
    touch(now = Date.now()) {
      lastReceived = now;
    },
    get lastReceived() {
      return lastReceived;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
