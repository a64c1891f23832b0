/** The bench client of the bare node:http server: the shared HTTP client, JSON bodies. */
import { runClientMain } from '../../lib/client-main.js';
import { BENCH_SERVICE_NAME } from '../../lib/scenarios.js';
import { jsonClient } from './http-client.js';

await runClientMain(async (port) => jsonClient(port, BENCH_SERVICE_NAME));
