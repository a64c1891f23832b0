/**
 * Checks on what a load did, across providers: which writes (non-idempotent calls) ran where and how
 * often, and whether the consumer's view matches. Call ids are consecutive from 1; with the `both` mix,
 * even ids are reads and odd ids writes.
 */
import type { LoadReport } from '../../chaos/support/load.js';
import type { Agent, Executed } from './agents.js';

export interface WriteAudit {
  /** Write ids executed more than once, across every provider. */
  duplicated: number[];
  /** Writes the consumer saw succeed that no provider executed exactly once. */
  okNotOnce: number[];
  /** Writes that failed at the consumer but were executed by a provider (the answer was lost). */
  failedButExecuted: number[];
  /** Executed writes per provider name. */
  perProvider: Record<string, number>;
}

/** Audits the writes of `report` against what `providers` executed (version v1). */
export async function auditWrites(
  report: LoadReport,
  providers: readonly Agent[],
  isWrite: (id: number) => boolean,
): Promise<WriteAudit> {
  const executed: Array<[string, Executed]> = await Promise.all(
    providers.map(async (agent) => [agent.name, await agent.executed()] as [string, Executed]),
  );
  const counts = new Map<number, number>();
  const perProvider: Record<string, number> = {};
  for (const [name, done] of executed) {
    perProvider[name] = done.v1.writes.length;
    for (const id of done.v1.writes) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const failed = new Set(report.failures.map((failure) => failure.id));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  const okNotOnce: number[] = [];
  for (let id = 1; id <= report.issued; id++) {
    if (isWrite(id) && !failed.has(id) && counts.get(id) !== 1) okNotOnce.push(id);
  }
  const failedButExecuted = [...failed].filter((id) => isWrite(id) && (counts.get(id) ?? 0) > 0);
  return { duplicated, okNotOnce, failedButExecuted, perProvider };
}
