/**
 * The call a provider method is serving, where the code running now can find it: during the method's
 * synchronous part (a plain variable, nothing per call but the assignment), and past its awaits when the
 * method runs inside an AsyncLocalStorage (`asyncCallContext: true`, or an app that refers services:
 * the calls a method makes then inherit from the call it serves, docs/cluster.md "Context across hops").
 *
 * It lives in `core/` because both stacks read it: the provider puts the invocation here
 * (provider/call-context.ts, the public `callContext()`), the consumer reads it when a call starts
 * (consumer/hop-context.ts). Nothing is paid by a process that never serves a call in an async context:
 * the storage is made by the first method that runs in one.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Invocation } from './invocation.js';

let current: Invocation | undefined;
/** Made by the first method that runs with an async call context. */
let storage: AsyncLocalStorage<Invocation> | undefined;

/** The invocation being served, or undefined outside a provider method (and its continuation). */
export function servedCall(): Invocation | undefined {
  return current ?? storage?.getStore();
}

/** Runs `fn` with `invocation` as the served call of its synchronous part. */
export function runServed<R>(invocation: Invocation, fn: () => R): R {
  const previous = current;
  current = invocation;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

/** Runs `fn` with `invocation` as the served call of everything it starts, past its awaits. */
export function runServedAsync<R>(invocation: Invocation, fn: () => R): R {
  storage ??= new AsyncLocalStorage<Invocation>();
  const previous = current;
  current = invocation;
  try {
    return storage.run(invocation, fn);
  } finally {
    current = previous;
  }
}
