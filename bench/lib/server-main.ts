/**
 * The entry point of every system's server script, and the server side of the harness protocol:
 * start, print `READY <port>`, serve until stdin closes (or SIGTERM), then print `RSS <peak bytes>`
 * and exit.
 */
import { readFileSync } from 'node:fs';

/** A started server of one system. */
export interface BenchServer {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Stops accepting and closes connections; bounded by the harness (it waits 2 s). */
  close(): Promise<void> | void;
}

/** How long `close()` may take before the process exits anyway. */
const CLOSE_WAIT_MS = 2000;

/** Starts the server, announces it, and stops it when the harness says so. */
export async function runServerMain(start: () => Promise<BenchServer>): Promise<void> {
  const peakRss = createPeakRssProbe();
  let server: BenchServer;
  try {
    server = await start();
  } catch (error) {
    process.stderr.write(`server failed to start: ${error instanceof Error ? error.stack : error}\n`);
    process.exit(1);
  }
  process.stdout.write(`READY ${server.port}\n`);

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const rss = peakRss();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve(server.close()),
        new Promise((resolve) => {
          timer = setTimeout(resolve, CLOSE_WAIT_MS);
        }),
      ]);
    } catch {
      // exiting anyway
    } finally {
      clearTimeout(timer);
    }
    process.stdout.write(`RSS ${rss}\n`, () => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
}

/**
 * Returns a function giving the process's peak resident set size in bytes: the kernel's high-water
 * mark (`VmHWM` in /proc/self/status) on Linux, else the highest of `process.memoryUsage.rss()`
 * sampled every 50 ms.
 */
export function createPeakRssProbe(): () => number {
  if (readVmHwm() !== undefined) return () => readVmHwm() ?? process.memoryUsage.rss();
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  sampler.unref();
  return () => Math.max(peak, process.memoryUsage.rss());
}

function readVmHwm(): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
