/**
 * The overload gate (governance/overload-gate.ts) on a scripted clock and a scripted event-loop
 * utilisation: it tells overload (a queue that grows interval after interval on a saturated loop) from
 * a burst, a closed loop and a provider whose loop is not saturated — with the event loop's habit of
 * reading a poll's requests together and running them after.
 */
import { describe, expect, it } from 'vitest';
import { createOverloadGate, type OverloadGate } from '../../src/governance/overload-gate.js';

/** Calls arriving at and leaving a gate, with the count in flight kept. */
class Provider {
  inflight = 0;
  readonly gate: OverloadGate;
  utilisation: number;
  constructor(utilisation = 1) {
    this.utilisation = utilisation;
    this.gate = createOverloadGate({}, () => this.utilisation);
  }
  arrive(at: number, count = 1): void {
    for (let i = 0; i < count; i++) this.gate.arrived(at, this.inflight++);
  }
  end(at: number, count = 1): void {
    for (let i = 0; i < count; i++) this.gate.departed(at, this.inflight--);
  }
  /** Every `everyMs` from `from` to `to`: `ended` calls end, `arrived` arrive. */
  steady(from: number, to: number, everyMs: number, ended: number, arrived: number): void {
    for (let t = from; t < to; t += everyMs) {
      this.end(t, Math.min(ended, this.inflight));
      this.arrive(t, arrived);
    }
  }
}

describe('the overload gate', () => {
  it('open loop at twice the capacity: overloaded within four intervals', () => {
    const p = new Provider();
    // every 10 ms 1 call ends and 2 arrive
    p.steady(0, 300, 10, 1, 2);
    expect(p.gate.overloaded).toBe(false);
    p.steady(300, 410, 10, 1, 2);
    expect(p.gate.overloaded).toBe(true);
    expect(p.gate.throughputPerMs).toBeCloseTo(0.1);
  });

  it('open loop at twice the capacity on top of a standing queue of 1 000 (linear growth): overloaded', () => {
    const p = new Provider();
    p.arrive(0, 1_000);
    p.steady(0, 1_000, 10, 1, 1);
    expect(p.gate.overloaded).toBe(false);
    p.steady(1_000, 1_500, 10, 1, 2);
    expect(p.gate.overloaded).toBe(true);
  });

  it("Node's turns: each poll's batch twice the last, nothing read while it runs: overloaded", () => {
    const p = new Provider();
    let at = 0;
    let batch = 16;
    p.arrive(at, batch);
    for (let round = 0; round < 4; round++) {
      // the batch runs (4 ms a call); then the next poll reads twice as many
      for (let i = 0; i < batch; i++) {
        at += 4;
        p.end(at);
      }
      batch *= 2;
      p.arrive(at, batch);
    }
    expect(p.gate.overloaded).toBe(true);
  });

  it('a burst of 500 on an idle provider, drained over 2.5 s, then a trickle: never overloaded', () => {
    const p = new Provider();
    p.steady(0, 1_000, 50, 1, 1);
    p.arrive(1_000, 500);
    for (let i = 0; i < 500; i++) p.end(1_000 + 5 * (i + 1));
    p.steady(3_600, 5_000, 50, 1, 1);
    expect(p.gate.overloaded).toBe(false);
  });

  it('a closed loop of 500 callers (each answer brings the next call), in turns or interleaved: never overloaded', () => {
    const p = new Provider();
    p.arrive(0, 500);
    // in turns: 500 calls run over 2.5 s, then the 500 next are read
    for (let cycle = 0; cycle < 4; cycle++) {
      for (let i = 0; i < 500; i++) p.end(cycle * 2_500 + 5 * (i + 1));
      p.arrive((cycle + 1) * 2_500, 500);
    }
    // interleaved: one ends, one arrives, every ms
    p.steady(10_001, 12_000, 1, 1, 1);
    expect(p.gate.overloaded).toBe(false);
  });

  it('a growing queue on a loop that is not saturated (calls waiting on something else): never overloaded', () => {
    const p = new Provider(0.5);
    p.steady(0, 2_000, 10, 1, 2);
    expect(p.gate.overloaded).toBe(false);
  });

  it('growth interrupted: the count of intervals starts again', () => {
    const p = new Provider();
    p.steady(0, 250, 10, 1, 2);
    p.steady(250, 450, 10, 3, 1);
    p.steady(450, 700, 10, 1, 2);
    expect(p.gate.overloaded).toBe(false);
    p.steady(700, 900, 10, 1, 2);
    expect(p.gate.overloaded).toBe(true);
  });

  it('stays overloaded while it refuses; leaves once nothing was refused for quietMs', () => {
    const p = new Provider();
    p.steady(0, 500, 10, 1, 2);
    expect(p.gate.overloaded).toBe(true);
    p.gate.refused(500);
    p.steady(500, 1_400, 10, 1, 1);
    expect(p.gate.overloaded).toBe(true);
    p.gate.refused(1_400);
    p.steady(1_400, 2_300, 10, 1, 1);
    expect(p.gate.overloaded).toBe(true);
    p.steady(2_300, 2_500, 10, 1, 1);
    expect(p.gate.overloaded).toBe(false);
  });
});

describe("the gate in Node's turns", () => {
  /**
   * Turns of a loaded loop: the batch read last runs (5 ms a call) while nothing is read, then a poll
   * reads the next batch, judged at the first call that ends after it.
   */
  function turns(batches: number[]): OverloadGate {
    const p = new Provider();
    let at = 0;
    p.arrive(at, batches[0]!);
    for (let i = 1; i < batches.length; i++) {
      for (let c = 0; c < batches[i - 1]!; c++) {
        at += 5;
        p.end(at);
      }
      p.arrive(at, batches[i]!);
    }
    p.end(at + 1);
    return p.gate;
  }

  it('judges the poll after a silent turn against the calls that ended in it: twice as many is evidence, as many is not', () => {
    expect(turns([40, 80, 160]).overloaded).toBe(true);
    expect(turns([40, 40, 40, 40]).overloaded).toBe(false);
  });
});

describe('the gate and deadline-aware admission', () => {
  /**
   * A saturated provider whose queue does not grow in here because deadline-aware admission refuses
   * what would wait too long: every 10 ms 1 call ends, 1 is admitted and `shed` are refused by it.
   */
  function shedding(shed: number, utilisation = 1): OverloadGate {
    const p = new Provider(utilisation);
    p.arrive(0, 10);
    for (let t = 0; t < 500; t += 10) {
      for (let i = 0; i < shed; i++) p.gate.shedByDeadline(t, p.inflight);
      p.end(t);
      p.arrive(t);
    }
    return p.gate;
  }

  it('counts its refusals as a queue: a saturated loop refusing more than a tenth of what it serves is overloaded', () => {
    expect(shedding(2).overloaded).toBe(true);
    // the same queue, nothing refused: a closed loop, not overload
    expect(shedding(0).overloaded).toBe(false);
  });

  it('not when the loop is not busy (a slow dependency is not overload of this process)', () => {
    expect(shedding(2, 0.5).overloaded).toBe(false);
  });

  it('takes the evidence of refusals from a loop busy refusing (0.8, below the 0.9 of a growing queue)', () => {
    expect(shedding(2, 0.8).overloaded).toBe(true);
  });

  it('is judged on refusals too, when every call is refused and none reaches the limit', () => {
    const p = new Provider();
    p.arrive(0, 10);
    // from here on only refusals: 50 per 10 ms, the 10 admitted still running
    for (let t = 10; t <= 400; t += 10) for (let i = 0; i < 50; i++) p.gate.shedByDeadline(t, p.inflight);
    expect(p.gate.overloaded).toBe(true);
  });

  it('while overloaded its refusals keep the gate open (the quiet time counts from the last one)', () => {
    const gate = shedding(2);
    // a second later deadline-aware admission is still refusing: still overloaded
    for (let t = 500; t < 1_700; t += 100) {
      gate.shedByDeadline(t, 10);
      gate.arrived(t, 10);
    }
    expect(gate.overloaded).toBe(true);
  });

  it("the loop's busy time per call: utilisation × the interval over the calls that ended in it, kept through thin intervals", () => {
    const p = new Provider(0.5);
    expect(p.gate.busyMsPerCall).toBe(0);
    // a closed loop: every 10 ms 5 calls end and 5 arrive, at half the loop's time: 1 ms per call
    p.arrive(0, 5);
    p.steady(10, 220, 10, 5, 5);
    expect(p.gate.overloaded).toBe(false);
    expect(p.gate.busyMsPerCall).toBeCloseTo(1, 1);
    // an interval in which fewer than 10 calls end says too little: the last figure stays
    p.utilisation = 0.1;
    p.steady(220, 440, 20, 1, 1);
    expect(p.gate.busyMsPerCall).toBeCloseTo(1, 1);
  });
});
