/**
 * hedging: a call of an idempotent method goes to one provider; when it has not answered after a
 * delay — the method's observed latency at `hedgePercentile` (default 95), or a fixed `hedgeDelayMs` —
 * a second attempt goes to another provider. The first answer wins and the other attempt is cancelled
 * (on its provider too: its handler's signal aborts). A slow provider's tail is cut at about the delay
 * plus a normal call.
 *
 * The extra load is capped twice: only calls slower than the percentile are hedged (about 5% at the
 * 95th), and the hedges may not exceed `hedgeBudgetRatio` (default 10%) of the method's calls over 10 s
 * (a call that finds the budget spent is not hedged). A hedge carries the retry marker
 * (`callisto-retry: hedge`), so nothing below it retries.
 *
 * Failures follow failover's rules: a failed attempt while the other runs waits for it; when none is
 * left, the call is retried on another provider if `mayRetry` allows (retries, deadline, budget).
 * Never for non-idempotent methods: their calls (and oneway calls, stream calls, calls made while
 * serving a retry) go through `failover`, one attempt at a time.
 */
import { RpcError } from '../core/rpc-error.js';
import type {
  AttemptListener,
  ClusterContext,
  ClusterEndpoint,
  ClusterFactory,
  ClusterInvocation,
} from './cluster.js';
import { failover } from './failover.js';
import { createHedgeDelay, type HedgeDelay } from './hedge-delay.js';
import { createRetryBudget, type RetryBudget } from './retry-budget.js';
import { RETRY_ATTACHMENT } from './retry-layer.js';
import { sleep } from './sleep.js';

export const DEFAULT_HEDGE_PERCENTILE = 95;
export const DEFAULT_HEDGE_BUDGET_RATIO = 0.1;

export const hedging: ClusterFactory = (context) => {
  const options = context.options;
  const delay = createHedgeDelay({
    fixedMs: options.hedgeDelayMs ?? 0,
    percentile: options.hedgePercentile ?? DEFAULT_HEDGE_PERCENTILE,
  });
  const budget = createRetryBudget({
    ratio: options.hedgeBudgetRatio ?? DEFAULT_HEDGE_BUDGET_RATIO,
    minRetriesPerSecond: 0,
  });
  const oneAtATime = failover(context);
  return (call) => {
    if (!call.idempotent || call.oneway || call.stream !== undefined || call.underRetry === true) {
      return oneAtATime(call);
    }
    return new Promise<unknown>((resolve, reject) => {
      context.recordCall();
      budget.recordCall();
      new HedgedCall({ context, call, delay, budget, resolve, reject }).start();
    });
  };
};

interface HedgedCallInit {
  readonly context: ClusterContext;
  readonly call: ClusterInvocation;
  readonly delay: HedgeDelay;
  readonly budget: RetryBudget;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One attempt of a hedged call: its provider, its own invocation (a fork) and what cancels it. */
class HedgeAttempt implements AttemptListener {
  readonly controller = new AbortController();
  readonly startedAt = performance.now();
  readonly invocation: ClusterInvocation;

  constructor(
    readonly owner: HedgedCall,
    readonly endpoint: ClusterEndpoint,
    call: ClusterInvocation,
    mark: string | undefined,
  ) {
    this.invocation = call.fork(this.controller.signal);
    if (mark !== undefined) {
      this.invocation.attachments = { ...this.invocation.attachments, [RETRY_ATTACHMENT]: mark };
    }
  }

  onAnswer(value: unknown): void {
    this.owner.answered(this, value);
  }

  onFailure(error: RpcError): void {
    this.owner.failed(this, RpcError.from(error));
  }
}

class HedgedCall {
  readonly #init: HedgedCallInit;
  readonly #running: HedgeAttempt[] = [];
  readonly #tried: ClusterEndpoint[] = [];
  #attempts = 0;
  #hedged = false;
  #settled = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #onCallerAbort = () => {
    const reason = this.#init.call.signal?.reason;
    for (const attempt of [...this.#running]) attempt.controller.abort(reason);
  };

  constructor(init: HedgedCallInit) {
    this.#init = init;
  }

  start(): void {
    const { call, delay } = this.#init;
    call.signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    if (!this.#launch(undefined) || this.#settled) return;
    const wait = delay.delayMs();
    if (wait === undefined) return;
    if (call.deadline > 0 && Date.now() + wait >= call.deadline) return;
    this.#timer = setTimeout(() => this.#hedge(), wait);
  }

  answered(attempt: HedgeAttempt, value: unknown): void {
    this.#remove(attempt);
    if (this.#settled) return;
    this.#finish();
    this.#init.delay.observe(performance.now() - attempt.startedAt);
    const lost = new RpcError('Cancelled', `${this.#init.context.label}: another provider answered first`);
    // the cancelled attempt's latency is not known (only that it was longer): left out, or the hedges'
    // own delays would raise the percentile they are taken from
    for (const other of [...this.#running]) other.controller.abort(lost);
    this.#init.resolve(value);
  }

  failed(attempt: HedgeAttempt, error: RpcError): void {
    this.#remove(attempt);
    if (this.#settled || this.#running.length > 0) return; // the other attempt may still answer
    const { context, call } = this.#init;
    const delay = context.mayRetry(error, attempt.invocation, this.#attempts);
    if (delay === undefined) {
      this.#finish();
      this.#init.reject(error);
      return;
    }
    const retry = () => {
      if (!this.#settled) this.#launch(String(this.#attempts + 1));
    };
    if (delay > 0) {
      sleep(delay, call.signal).then(retry, (cancelled: unknown) => {
        if (this.#settled) return;
        this.#finish();
        this.#init.reject(cancelled);
      });
    } else retry();
  }

  /** The delay passed with one attempt running: a second one elsewhere, within the budget. */
  #hedge(): void {
    this.#timer = undefined;
    if (this.#settled || this.#hedged || this.#running.length !== 1) return;
    const running = this.#running[0]!.endpoint;
    if (!this.#init.context.selectable().some((endpoint) => endpoint !== running)) return;
    if (!this.#init.budget.tryAcquireRetry()) return;
    this.#hedged = true;
    this.#launch('hedge');
  }

  /** Starts an attempt on a provider not tried yet (while one remains); false when none was found. */
  #launch(mark: string | undefined): boolean {
    const { context, call } = this.#init;
    let endpoint: ClusterEndpoint;
    try {
      endpoint = context.select(call, this.#tried);
    } catch (error) {
      if (this.#running.length === 0 && !this.#settled) {
        this.#finish();
        this.#init.reject(error);
      }
      return false;
    }
    this.#attempts++;
    this.#tried.push(endpoint);
    const attempt = new HedgeAttempt(this, endpoint, call, mark);
    this.#running.push(attempt);
    context.attempt(endpoint, attempt.invocation, attempt);
    return true;
  }

  #remove(attempt: HedgeAttempt): void {
    const at = this.#running.indexOf(attempt);
    if (at >= 0) this.#running.splice(at, 1);
  }

  #finish(): void {
    this.#settled = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#init.call.signal?.removeEventListener('abort', this.#onCallerAbort);
  }
}
