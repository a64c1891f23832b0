/**
 * Whether the provider is overloaded, as opposed to busy (docs/operations.md, "Overload protection"):
 * the adaptive concurrency limit (concurrency-limiter.ts) refuses calls only while this says so.
 *
 * Overload is arrivals above departures, for long: the queue keeps growing, and with it the latency of
 * every admitted call. A burst (many calls at once on a provider that then drains them) and a closed
 * loop (callers that send a new call when one is answered: their queue is bounded by their number) also
 * make a queue and a high latency, sometimes a long one, but no growth: refusing them would only fail
 * calls the provider was about to answer. So latency alone (what Gradient2 reads) cannot tell; the gate
 * reads the queue's *trend*, CoDel's idea ("a standing queue above target for an interval") with growth
 * as the test instead of a fixed sojourn target:
 *
 *   each interval (at least `intervalMs`) has a mean queue: the calls in flight, averaged over time;
 *   an interval is evidence of overload when its mean queue grew over the interval's before by more
 *   than `growth` times the calls that ended in it (and `minExcess` calls) — a queue that grows by a
 *   tenth of what is served grows while arrivals exceed departures by a tenth, whatever the scale —
 *   and the event loop was saturated over it (its utilisation at least `saturation`);
 *   `confirmIntervals` (2) intervals of evidence in a row and the provider is overloaded; it stays so
 *   until nothing was refused for `quietMs` (what arrives fits under the limit again).
 *
 * The saturation test keeps a provider whose calls wait for something else (a database, a timer, a
 * long poll) from ever counting as overloaded: its queue grows because of what it waits for, not because
 * it has no time left, and refusing would not help it. The consecutive intervals keep one burst from
 * counting: its queue rises in one interval and falls in the next ones. A closed loop's mean queue is
 * flat. Means over time, not counts at instants: the calls in flight saw-tooth with each turn of the
 * event loop (a loaded loop reads every waiting request in one poll, then runs them), so two counts
 * taken at arbitrary instants differ by a whole turn's batch. An interval is judged at the first
 * arrival after it lasted `intervalMs`.
 *
 * Node's turns: when the loop is so loaded that a whole interval passes in one turn (calls end, nothing
 * is read), the interval means come too late (a turn's batch doubles at twice the capacity, and so does
 * the time between judgements). Then the poll that ends the silence is judged as a turn instead: its
 * requests (counted until the first call ends after them) against the calls that ended while they
 * waited in the socket — more than `growth` above them (and `minExcess`) is evidence, the same λ/μ − 1.
 * A closed loop reads as many as it was answered; a burst after an idle spell has no calls that ended
 * (at least 10 must have), so it is judged by its mean.
 *
 * What it cannot tell: the ramp-up of a closed loop whose requests take several turns to be read (more
 * callers of a slow method than one read brings in) grows like the start of an overload while it lasts.
 *
 * Cost per call: a multiplication, two additions and a comparison; the judgement (an event-loop
 * utilisation read) at most once per interval.
 */
import { performance } from 'node:perf_hooks';

export interface OverloadGateOptions {
  /** An interval lasts at least this long, ms. Default 100. */
  readonly intervalMs: number;
  /** Intervals of evidence in a row before the provider counts as overloaded. Default 2. */
  readonly confirmIntervals: number;
  /**
   * The mean queue must grow over the interval before's by this share of the calls that ended in the
   * interval to be evidence (arrivals above departures by that share). Default 0.1.
   */
  readonly growth: number;
  /** …and by at least this many calls. Default 4. */
  readonly minExcess: number;
  /** The event loop's utilisation over the interval that makes it saturated, (0, 1]. Default 0.9. */
  readonly saturation: number;
  /** Overloaded until nothing was refused for this long, ms. Default 1000. */
  readonly quietMs: number;
  /**
   * The utilisation over the interval from which deadline-aware admission's refusals are evidence,
   * (0, 1]. Default 0.75.
   */
  readonly shedSaturation: number;
}

export const DEFAULT_OVERLOAD_GATE_OPTIONS: OverloadGateOptions = {
  intervalMs: 100,
  confirmIntervals: 2,
  growth: 0.1,
  minExcess: 4,
  saturation: 0.9,
  quietMs: 1_000,
  shedSaturation: 0.75,
};

/** The event loop's utilisation since the last read, [0, 1]. */
export type UtilisationReader = () => number;

/** Reads `performance.eventLoopUtilization()` against the previous read. */
export function createUtilisationReader(): UtilisationReader {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

export interface OverloadGate {
  /** Whether the provider counts as overloaded now (its limit applies). */
  readonly overloaded: boolean;
  /** The event loop's utilisation over the last judged interval, [0, 1] (0 before one). */
  readonly utilisation: number;
  /** Calls that ended per ms over the last judged interval (0 before one). */
  readonly throughputPerMs: number;
  /**
   * The event loop's busy time per call that ended, ms: its utilisation × the interval's length over
   * the calls that ended in it, from the last interval in which at least 10 ended (0 before one). What
   * a call admitted now costs the calls behind it, whether the provider is overloaded or not.
   */
  readonly busyMsPerCall: number;
  /** A call reached admission at `nowMs` (monotonic); `inflight` calls were in flight before it. */
  arrived(nowMs: number, inflight: number): void;
  /** The limit refused the call that just arrived. */
  refused(nowMs: number): void;
  /** An admitted call ended at `nowMs`; `inflight` were in flight before it ended. */
  departed(nowMs: number, inflight: number): void;
  /**
   * A call was refused before admission because its caller's budget was smaller than the method's
   * expected time (deadline-aware admission): as much evidence of a queue as a growing one, and while
   * overloaded, a refusal that keeps the gate open.
   */
  shedByDeadline(nowMs: number, inflight: number): void;
}

/** Calls that must end in a silence of `intervalMs` for the poll after it to be judged as a turn. */
const MIN_TURN_DEPARTURES = 10;
/** Calls that must end in an interval for its busy time per call to be taken (`busyMsPerCall`). */
const MIN_DEPARTURES_FOR_BUSY_TIME = 10;

class TrendGate implements OverloadGate {
  readonly #o: OverloadGateOptions;
  readonly #utilisation: UtilisationReader;
  readonly #onOverload: () => void;
  overloaded = false;
  utilisation = 0;
  throughputPerMs = 0;
  busyMsPerCall = 0;
  #start = Number.NaN;
  /** The calls in flight integrated over time since the interval started, call·ms. */
  #area = 0;
  #lastAt = 0;
  #departures = 0;
  /**
   * Set when requests arrive after a whole interval of silence in which calls ended (the loop was
   * working through one poll's batch): the calls that ended in it, against which the requests of this
   * poll are judged at the first call that ends after them; -1: none pending.
   */
  #turnServed = -1;
  #turnArrivals = 0;
  #lastArrivalAt = Number.NEGATIVE_INFINITY;
  #departuresSinceArrival = 0;
  /** The last judged interval's mean queue (none before the first). */
  #previousMean = Number.NaN;
  #streak = 0;
  #lastRefusal = Number.NEGATIVE_INFINITY;
  /** Calls deadline-aware admission refused in the current interval. */
  #deadlineShed = 0;

  constructor(options: OverloadGateOptions, utilisation: UtilisationReader, onOverload: () => void) {
    this.#o = options;
    this.#utilisation = utilisation;
    this.#onOverload = onOverload;
  }

  arrived(nowMs: number, inflight: number): void {
    if (Number.isNaN(this.#start)) this.#restart(nowMs);
    this.#advance(nowMs, inflight);
    if (this.overloaded && nowMs - this.#lastRefusal >= this.#o.quietMs) {
      this.overloaded = false;
      this.#streak = 0;
    }
    if (this.#turnServed >= 0) this.#turnArrivals++;
    else if (
      nowMs - this.#lastArrivalAt >= this.#o.intervalMs &&
      this.#departuresSinceArrival >= MIN_TURN_DEPARTURES
    ) {
      // the first request read after a silent turn: judged once this poll's requests are all in
      this.#turnServed = this.#departuresSinceArrival;
      this.#turnArrivals = 1;
    } else if (nowMs - this.#start >= this.#o.intervalMs) this.#judgeMean(nowMs);
    this.#lastArrivalAt = nowMs;
    this.#departuresSinceArrival = 0;
  }

  refused(nowMs: number): void {
    this.#lastRefusal = nowMs;
  }

  shedByDeadline(nowMs: number, inflight: number): void {
    this.#deadlineShed++;
    // judged here too: while every call is refused, few arrive at the limit to have an interval judged
    if (!Number.isNaN(this.#start) && this.#turnServed < 0 && nowMs - this.#start >= this.#o.intervalMs) {
      this.#advance(nowMs, inflight);
      this.#judgeMean(nowMs);
    }
    if (this.overloaded) this.#lastRefusal = nowMs;
  }

  departed(nowMs: number, inflight: number): void {
    this.#advance(nowMs, inflight);
    this.#departures++;
    this.#departuresSinceArrival++;
    if (this.#turnServed >= 0) this.#judgeTurn(nowMs);
  }

  /** Integrates the calls in flight (`inflight` since the last event) up to `nowMs`. */
  #advance(nowMs: number, inflight: number): void {
    this.#area += inflight * (nowMs - this.#lastAt);
    this.#lastAt = nowMs;
  }

  /** A poll's requests against the calls that ended while they waited in the socket. */
  #judgeTurn(nowMs: number): void {
    const o = this.#o;
    const growing = this.#turnArrivals > this.#turnServed * (1 + o.growth) + o.minExcess;
    this.#turnServed = -1;
    this.#judge(nowMs, growing);
  }

  /** The interval's mean queue against the one before. */
  #judgeMean(nowMs: number): void {
    const o = this.#o;
    const mean = this.#area / (nowMs - this.#start);
    const previous = this.#previousMean;
    // queue growth per call served: λ/μ − 1 for arrivals λ and departures μ (0 for a closed loop)
    this.#judge(nowMs, mean - previous > o.growth * this.#departures + o.minExcess);
  }

  #judge(nowMs: number, queueGrowing: boolean): void {
    const o = this.#o;
    // Deadline-aware admission refusing calls is a queue too, one it keeps from growing in here: the
    // calls it refused would have waited longer than their callers' budgets. Without this, on a
    // saturated loop it and the queue take turns (it refuses all, the queue drains, it admits all) and
    // the admitted calls finish after their deadlines; with it the limit comes down and holds the queue.
    const shedding = this.#deadlineShed > o.growth * this.#departures + o.minExcess;
    const elapsed = nowMs - this.#start;
    this.#previousMean = elapsed > 0 ? this.#area / elapsed : this.#previousMean;
    this.throughputPerMs = elapsed > 0 ? this.#departures / elapsed : 0;
    this.utilisation = this.#utilisation();
    if (this.#departures >= MIN_DEPARTURES_FOR_BUSY_TIME)
      this.busyMsPerCall = (this.utilisation * elapsed) / this.#departures;
    // A loop that spends its time refusing is less than saturated by what the refusals saved it (at
    // four times the capacity, 0.85 while it refused 2,000 calls in 450 ms): the evidence of refusals
    // is taken from a lower utilisation, still far above a provider waiting on something else.
    const evidence =
      (queueGrowing && this.utilisation >= o.saturation) ||
      (shedding && this.utilisation >= o.shedSaturation);
    this.#restart(nowMs);
    if (!evidence) {
      this.#streak = 0;
      return;
    }
    this.#streak++;
    if (!this.overloaded && this.#streak >= o.confirmIntervals) {
      this.overloaded = true;
      // nothing refused yet: the quiet time counts from now
      this.#lastRefusal = nowMs;
      this.#onOverload();
    }
  }

  #restart(nowMs: number): void {
    this.#start = nowMs;
    this.#lastAt = nowMs;
    this.#area = 0;
    this.#departures = 0;
    this.#deadlineShed = 0;
  }
}

/**
 * `utilisation` reads the event loop's utilisation since its last read (default
 * `performance.eventLoopUtilization`); `onOverload` is told when the provider becomes overloaded.
 */
export function createOverloadGate(
  options: Partial<OverloadGateOptions> = {},
  utilisation: UtilisationReader = createUtilisationReader(),
  onOverload: () => void = () => {},
): OverloadGate {
  return new TrendGate({ ...DEFAULT_OVERLOAD_GATE_OPTIONS, ...options }, utilisation, onOverload);
}
