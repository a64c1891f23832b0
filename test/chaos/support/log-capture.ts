/** A logger that keeps warnings and errors with their time, so a test can wait for and time an event. */
import type { Logger } from '../../../src/index.js';

export interface CapturedLine {
  at: number;
  level: 'warn' | 'error';
  message: string;
}

export function captureLogger(): {
  logger: Logger;
  lines: CapturedLine[];
  find(pattern: RegExp): CapturedLine | undefined;
} {
  const lines: CapturedLine[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message) => lines.push({ at: Date.now(), level: 'warn', message }),
    error: (message) => lines.push({ at: Date.now(), level: 'error', message }),
  };
  return { logger, lines, find: (pattern) => lines.find((line) => pattern.test(line.message)) };
}
