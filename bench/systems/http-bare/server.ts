/**
 * What a competent engineer writes with node:http in an afternoon: `POST /<service>/<method>` with a JSON
 * array of arguments, the shared service's method awaited, the result as JSON; 404 for anything else.
 * The bare server the HTTP/JSON entry is measured against (target: at least 70 % of its calls/s).
 */
import http from 'node:http';
import { BENCH_SERVICE_NAME, type BenchService, benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';

const methods = new Map<string, (...args: never[]) => Promise<unknown>>([
  [`/${BENCH_SERVICE_NAME}/say`, benchService.say as BenchService['say']],
  [`/${BENCH_SERVICE_NAME}/getUser`, benchService.getUser as BenchService['getUser']],
]);

await runServerMain(async () => {
  const server = http.createServer({ keepAliveTimeout: 5_000 }, (request, response) => {
    const method = request.method === 'POST' ? methods.get(request.url ?? '') : undefined;
    if (method === undefined) {
      response.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        const args = JSON.parse(Buffer.concat(chunks).toString()) as never[];
        const body = JSON.stringify(await method(...args));
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        });
        response.end(body);
      } catch (error) {
        const body = JSON.stringify({ error: String(error) });
        response.writeHead(500, { 'content-type': 'application/json' }).end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
});
