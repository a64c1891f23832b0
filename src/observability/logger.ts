/** The small logging interface Callisto writes to; pass a pino logger or anything with these methods. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger writing `[callisto] level: message` lines to stderr at or above `level`. */
export function createConsoleLogger(level: LogLevel, name = 'callisto'): Logger {
  const write = (at: LogLevel) => (message: string) => {
    if (RANK[at] >= RANK[level]) process.stderr.write(`[${name}] ${at}: ${message}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
