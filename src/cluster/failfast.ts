import type { ClusterFactory } from './cluster.js';

/** failfast: one attempt; the error goes straight to the caller. */
export const failfast: ClusterFactory = (context) => (invocation) => {
  try {
    return context.invoke(context.select(invocation), invocation);
  } catch (error) {
    return Promise.reject(error);
  }
};
