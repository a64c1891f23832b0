import { callLogFields } from '../observability/logger.js';
import type { ClusterFactory } from './cluster.js';

/** failsafe: one attempt; a failure is logged and the call resolves to `undefined` (for audit logs and the like). */
export const failsafe: ClusterFactory = (context) => async (invocation) => {
  try {
    return await context.invoke(context.select(invocation), invocation);
  } catch (error) {
    context.log(
      'warn',
      `failsafe: ${context.label} failed and was ignored: ${(error as Error).message}`,
      callLogFields(context.label, invocation),
    );
    return undefined;
  }
};
