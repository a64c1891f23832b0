/**
 * Credit-based flow control of streams (docs/protocol.md, "Streams"), the same on both sides: in bytes
 * of message frames (header and body), per stream and per connection, as HTTP/2 does. A receiver starts
 * each window at the protocol's initial size and returns credit (window updates) as the application
 * consumes messages, not as they arrive; a sender may send a message while both its stream's and its
 * connection's credit are positive, and subtracts the message's whole size (the credit may go below
 * zero by at most one message). Memory on the receiving side is bounded by the windows plus one message.
 */

/** Every stream's receive window when it opens, bytes (protocol constant). */
export const INITIAL_STREAM_WINDOW_BYTES = 64 * 1024;
/** Every connection's receive window for stream messages when it opens, bytes (protocol constant). */
export const INITIAL_CONNECTION_WINDOW_BYTES = 1024 * 1024;
/**
 * Bytes a sender writes in one run before it flushes them and lets the event loop turn once (reads,
 * timers, other calls). Without it a producer that never awaits writes its whole window in one run of
 * microtasks and hands it to the socket at the end: the reader gets nothing while the window is
 * written, and the window updates it sends back are read only once the window is spent, so the two
 * sides take turns instead of working at once (S6 ran at 55% of the raw node:net baseline).
 */
export const SEND_SLICE_BYTES = 16 * 1024;

/** Resolves after one turn of the event loop (its I/O included). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** No window may grow past this (2^31 - 1): an update that would is a protocol violation. */
export const MAX_WINDOW_BYTES = 2 ** 31 - 1;

/** What a sender may still send: its credit, and the senders waiting for more. */
export class SendWindow {
  #credit: number;
  #waiters: Array<() => void> = [];

  constructor(initial: number) {
    this.#credit = initial;
  }

  get credit(): number {
    return this.#credit;
  }

  /** Whether a message may be sent now. */
  get open(): boolean {
    return this.#credit > 0;
  }

  /** A window update from the peer; false when it would overflow MAX_WINDOW_BYTES (a violation). */
  grant(increment: number): boolean {
    if (increment <= 0 || this.#credit + increment > MAX_WINDOW_BYTES) return false;
    this.#credit += increment;
    if (this.#credit > 0) this.wakeAll();
    return true;
  }

  /** A message of `bytes` was sent. */
  spend(bytes: number): void {
    this.#credit -= bytes;
  }

  /** Resolves when credit arrives (or `wakeAll()` is called): the waiter checks again. */
  wait(): Promise<void> {
    return new Promise<void>((wake) => this.#waiters.push(wake));
  }

  /** Wakes every waiter (credit came, or the stream ended and they must stop). */
  wakeAll(): void {
    if (this.#waiters.length === 0) return;
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** What a receiver still accepts, and the credit it owes back as messages are consumed. */
export class ReceiveWindow {
  #available: number;
  #owed = 0;
  readonly #threshold: number;

  /** `target`: the window this side wants (at least `initial`; the difference is granted at once). */
  constructor(initial: number, target: number) {
    this.#available = initial;
    this.#threshold = Math.max(1, Math.floor(target / 4));
    this.#owed = Math.max(0, target - initial);
  }

  /** Credit to grant right after opening (the wanted window above the protocol's initial one); 0 for none. */
  takeInitialGrant(): number {
    const grant = this.#owed;
    this.#owed = 0;
    this.#available += grant;
    return grant;
  }

  /** A message of `bytes` arrived; false when the peer had no credit for it (a violation). */
  receive(bytes: number): boolean {
    if (this.#available <= 0) return false;
    this.#available -= bytes;
    return true;
  }

  /** The application consumed `bytes`: returns the credit to grant now (batched: 0 most times). */
  consumed(bytes: number): number {
    this.#owed += bytes;
    if (this.#owed < this.#threshold) return 0;
    const grant = this.#owed;
    this.#owed = 0;
    this.#available += grant;
    return grant;
  }
}

/** What a side knows when a window update arrives: its windows, and how to report a violation. */
export interface WindowUpdateTarget {
  /** The connection's send window (stream id 0). */
  readonly connection: SendWindow;
  /** The send window of an open stream, or undefined. */
  streamWindow(id: number): SendWindow | undefined;
  /** The highest stream id opened so far (an update above it is for a stream never opened). */
  readonly highest: number;
  violation(message: string): void;
}

/**
 * Applies a window update frame (a 4-byte credit increment for stream `requestId`, 0 for the
 * connection), the same on both sides: a malformed body, an overflow or a stream never opened is a
 * violation; an update for a stream already ended is ignored.
 */
export function applyWindowUpdate(requestId: number, body: Buffer, target: WindowUpdateTarget): void {
  if (body.length !== 4) {
    target.violation(`a window update of ${body.length} bytes (4 expected)`);
    return;
  }
  const increment = body.readUInt32BE(0);
  if (requestId === 0) {
    if (!target.connection.grant(increment))
      target.violation(`a connection window update of ${increment} overflows`);
    return;
  }
  const window = target.streamWindow(requestId);
  if (window === undefined) {
    if (requestId > target.highest) target.violation(`a window update for stream ${requestId}, never opened`);
    return;
  }
  if (!window.grant(increment))
    target.violation(`a window update of ${increment} overflows stream ${requestId}`);
}
