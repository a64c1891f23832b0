/**
 * Warm-up, shared by every weighted balancer: a provider that started recently gets a weight that ramps
 * linearly from 1 to its configured weight over `warmupMs`, so a cold JVM-style process (JIT, caches,
 * connection pools) is not flooded the moment it registers. Dubbo's formula:
 * `weight * uptime / warmupMs`, truncated, at least 1, at most `weight`.
 */

/**
 * The weight a balancer should use for a provider right now.
 *
 * - `weight <= 0` (or not a number): 0, never picked.
 * - `startTime <= 0` means "unknown": the full weight.
 * - A start time in the future (clock skew between hosts): 1, as Dubbo does.
 * - Past the warm-up period, or with `warmupMs <= 0`: the full weight.
 */
export function warmupWeight(weight: number, startTime: number, now: number, warmupMs: number): number {
  if (!(weight > 0)) return 0;
  if (startTime <= 0 || warmupMs <= 0) return weight;
  const uptime = now - startTime;
  if (uptime >= warmupMs) return weight;
  if (uptime < 0) return Math.min(1, weight);
  const ramped = Math.floor((uptime * weight) / warmupMs);
  return ramped < 1 ? Math.min(1, weight) : Math.min(ramped, weight);
}
