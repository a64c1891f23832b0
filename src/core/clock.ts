/**
 * A clock read once per turn of the event loop's work: the first read in a synchronous run takes
 * `Date.now()` and `performance.now()`, and every read until the next microtask checkpoint gets the same
 * values. A consumer under load handles hundreds of answers and new calls in one run; they share one
 * reading instead of making ten clock calls each. Precise enough for deadlines (a run is short; a
 * deadline computed from a reading a little in the past only expires that much earlier) and for latency
 * (the time between the run that sent a call and the run that read its answer).
 */
let wall = 0;
let monotonic = 0;
let fresh = false;

const expire = (): void => {
  fresh = false;
};

function read(): void {
  wall = Date.now();
  monotonic = performance.now();
  fresh = true;
  queueMicrotask(expire);
}

/** Date.now(), as read at the start of this synchronous run. */
export function tickNow(): number {
  if (!fresh) read();
  return wall;
}

/** performance.now(), as read at the start of this synchronous run. */
export function tickMonotonic(): number {
  if (!fresh) read();
  return monotonic;
}
