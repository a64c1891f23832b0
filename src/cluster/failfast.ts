import type { ClientInvocation } from '../consumer/client-invocation.js';
import type { ClusterFactory } from './cluster.js';

/** failfast: one attempt; the error goes straight to the caller. */
export const failfast: ClusterFactory = (context) => (invocation) => {
  const call = invocation as ClientInvocation;
  return context.invoke(context.select(call), call);
};
