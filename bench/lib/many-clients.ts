/**
 * S5, many consumers: one server, `clients` client processes started at once, each opening
 * `connections` connections. Every client warms up, prints `WARM` and waits; once all are warm the
 * harness writes `GO` to each, so that all of them measure the same window. The outcome is the total
 * calls/s over the clients, each client's own figures, and their spread (slowest over fastest).
 */
import type { ChildProcess } from 'node:child_process';
import { GO_LINE, WARM_LINE } from './client-main.js';
import type { ScenarioResult } from './driver.js';
import { onLines, type Pinning, spawnScript, startServer, tail } from './processes.js';
import type { ClientFigures, SystemOutcome } from './report.js';
import type { Scenario } from './scenarios.js';

export interface ManyClientsRun {
  readonly server: string;
  readonly client: string;
  readonly scenario: Scenario;
  /** Warm-up calls per client. */
  readonly warmupCalls: number;
  /** The window every client measures, ms. */
  readonly durationMs: number;
  readonly pinning: Pinning;
}

interface ClientsOutcome {
  results: Array<ScenarioResult | { unsupported: string }>;
}

/** Starts the clients, releases them together once all are warm, collects their result lines. */
function runClients(
  run: ManyClientsRun,
  port: number,
  onGo: () => void,
  onFirstResult: () => void,
): Promise<ClientsOutcome> {
  const { scenario } = run;
  const count = scenario.clients ?? 1;
  const args = [
    scenario.name,
    String(port),
    String(run.warmupCalls),
    String(scenario.concurrency),
    String(scenario.connections ?? 1),
    String(run.durationMs),
  ];
  const children: ChildProcess[] = [];
  const results: Array<ScenarioResult | { unsupported: string } | undefined> = [];
  let warm = 0;
  let resulted = 0;
  return new Promise((resolve, reject) => {
    let closed = 0;
    const timeoutMs = 120_000 + run.durationMs * 2;
    const timer = setTimeout(() => {
      for (const child of children) child.kill('SIGKILL');
      reject(new Error(`clients did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    for (let index = 0; index < count; index++) {
      const child = spawnScript(run.pinning.client, run.client, args);
      children.push(child);
      const stderr = tail(child);
      onLines(child, (line) => {
        if (line === WARM_LINE && ++warm === count) {
          onGo();
          for (const each of children) each.stdin?.write(`${GO_LINE}\n`);
        } else if (line.startsWith('{')) {
          try {
            const parsed = JSON.parse(line) as ScenarioResult | { unsupported: string };
            results[index] = parsed;
            if (++resulted === 1 && !('unsupported' in parsed)) onFirstResult();
            // a client that cannot run S5 says so at once: the others are not waited for
            if ('unsupported' in parsed) for (const each of children) each.stdin?.end();
          } catch {
            // not the result line
          }
        }
      });
      child.once('close', (code, signal) => {
        if (results[index] === undefined) {
          clearTimeout(timer);
          for (const each of children) each.kill('SIGKILL');
          reject(new Error(`client ${index} exited (${signal ?? code}) without a result\n${stderr()}`));
          return;
        }
        if (++closed === count) {
          clearTimeout(timer);
          resolve({ results: results as ClientsOutcome['results'] });
        }
      });
    }
  });
}

/** One S5 run: a fresh server, the clients, the server's CPU over the window and its peak RSS. */
export async function runManyClientsScenario(run: ManyClientsRun): Promise<SystemOutcome> {
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(run.server, run.pinning, 30_000);
    const running = server;
    let cpuAtGo: number | undefined;
    let cpuAtEnd: number | undefined;
    const { results } = await runClients(
      run,
      server.port,
      () => {
        cpuAtGo = running.cpuMs();
      },
      () => {
        cpuAtEnd = running.cpuMs();
      },
    );
    const rss = await server.stop();
    server = undefined;
    const unsupported = results.find((result) => 'unsupported' in result);
    if (unsupported !== undefined && 'unsupported' in unsupported) {
      return { ok: false, unsupported: true, error: unsupported.unsupported };
    }
    return aggregate(results as ScenarioResult[], rss, cpuAtGo, cpuAtEnd);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: server === undefined ? message : `${message}\n${server.diagnostics()}` };
  } finally {
    await server?.stop();
  }
}

function aggregate(
  results: readonly ScenarioResult[],
  rss: number | undefined,
  cpuAtGo: number | undefined,
  cpuAtEnd: number | undefined,
): SystemOutcome {
  const calls = results.reduce((sum, result) => sum + result.calls, 0);
  const rates = results.map((result) => result.callsPerSec);
  const perClient: ClientFigures[] = results.map((result) => ({
    callsPerSec: result.callsPerSec,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    clientCpuUsPerCall: result.clientCpuUsPerCall,
    errors: result.errors,
  }));
  const firstError = results.find((result) => result.firstError !== undefined)?.firstError;
  const outcome: SystemOutcome = {
    ok: true,
    calls,
    seconds: results[0]?.seconds ?? 0,
    callsPerSec: rates.reduce((sum, rate) => sum + rate, 0),
    p50Ms: Math.max(...results.map((result) => result.p50Ms)),
    p99Ms: Math.max(...results.map((result) => result.p99Ms)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    clientCpuUsPerCall:
      results.reduce((sum, result) => sum + result.clientCpuUsPerCall * result.calls, 0) / calls,
    serverPeakRssBytes: rss ?? null,
    serverCpuUsPerCall:
      cpuAtGo === undefined || cpuAtEnd === undefined ? null : ((cpuAtEnd - cpuAtGo) * 1000) / calls,
    perClient,
    spread: Math.min(...rates) / Math.max(...rates),
  };
  if (firstError !== undefined) outcome.firstError = firstError;
  return outcome;
}
