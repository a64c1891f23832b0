/** Times and durations as the command line prints them. */

/** `850 ms`, `12 s`, `3 min`, `5 h`, `2 d`. */
export function formatAge(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}

/** A wall-clock time: `2024-05-01 12:00:05` in UTC, or `-` for none. */
export function formatTime(epochMs: number): string {
  if (!(epochMs > 0)) return '-';
  return new Date(epochMs)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Milliseconds with a precision that suits them: `0.084`, `1.25`, `12.3`, `1234`. */
export function formatMs(ms: number): string {
  if (ms < 1) return ms.toFixed(3);
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}
