/**
 * The `grpc-timeout` header (gRPC over HTTP/2, "Requests"): 1 to 8 ASCII digits and a unit,
 * `H` hours, `M` minutes, `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

const TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * The timeout a `grpc-timeout` value states, in whole milliseconds rounded up (a positive timeout never
 * becomes 0); undefined when `value` is absent, and an Error naming the value when it is malformed.
 */
export function parseGrpcTimeout(value: string | undefined): number | undefined | Error {
  if (value === undefined) return undefined;
  const match = TIMEOUT.exec(value);
  if (match === null) {
    return new Error(
      `grpc-timeout ${JSON.stringify(value.slice(0, 20))} is not 1-8 digits and a unit (H M S m u n)`,
    );
  }
  return Math.ceil(Number(match[1]) * UNIT_MS[match[2]!]!);
}

/** `ms` as a `grpc-timeout` value: milliseconds while they fit in 8 digits, else seconds, minutes, hours. */
export function formatGrpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 100_000_000) return `${whole}m`;
  const seconds = Math.ceil(whole / 1000);
  if (seconds < 100_000_000) return `${seconds}S`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 100_000_000) return `${minutes}M`;
  return `${Math.min(99_999_999, Math.ceil(minutes / 60))}H`;
}
