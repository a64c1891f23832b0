/** The bench client of Callisto's HTTP/JSON entry: the same HTTP client as http-bare's. */
import { runClientMain } from '../../lib/client-main.js';
import { BENCH_SERVICE_NAME } from '../../lib/scenarios.js';
import { jsonClient } from '../http-bare/http-client.js';

await runClientMain(async (port) => jsonClient(port, BENCH_SERVICE_NAME));
