/**
 * The terminal step of a method with a worker executor: in place of calling the implementation on the
 * loop, it hands the call (arguments decoded and checked by the filters before it, attachments, deadline)
 * to the method's worker pool, and turns the thread's answer back into a result or an error as the
 * method would have given on the loop: response attachments set in the thread travel back, declared
 * business errors keep their class and fields. The call's signal (deadline, cancellation, connection
 * gone, shutdown) is watched while it waits and while it runs (executor-pool.ts).
 */

import type { ErrorDeclaration } from '../core/error-payload.js';
import type { Step } from '../core/filter.js';
import type { Attachments } from '../core/invocation.js';
import { rebuildThrown } from './executor-messages.js';
import type { ThreadOutcome, WorkerPool } from './executor-pool.js';
import type { ServerInvocation } from './server-invocation.js';

function copyAttachments(invocation: ServerInvocation, attachments: Attachments | undefined): void {
  if (attachments === undefined) return;
  const target = invocation.responseAttachments;
  for (const key of Object.keys(attachments)) target[key] = attachments[key]!;
}

export function workerStep(
  pool: WorkerPool,
  label: string,
  declared: readonly ErrorDeclaration[],
): Step<ServerInvocation> {
  return (invocation) => {
    // the signal fires at the deadline, on the caller's cancel, when its connection goes, at shutdown
    const signal = invocation.signal;
    const running = pool.run(
      {
        service: {
          name: invocation.service.name,
          version: invocation.service.version,
          group: invocation.service.group,
        },
        method: invocation.method,
        args: invocation.args,
        attachments: invocation.attachments,
        deadline: invocation.deadline,
        oneway: invocation.oneway,
        idempotent: invocation.idempotent,
        remoteAddress: invocation.remoteAddress,
      },
      label,
      signal,
    );
    return running.then((outcome: ThreadOutcome) => {
      copyAttachments(invocation, outcome.attachments);
      if (outcome.ok) return outcome.value;
      throw rebuildThrown(outcome.error, declared);
    });
  };
}
