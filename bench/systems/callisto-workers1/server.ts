/**
 * Callisto with `server.workers: 1` beside `callisto-workers2`: the same script, the same client (four
 * connections), so the two rows differ only in the number of processes serving the port.
 */
import { runWorkersServer } from '../callisto-workers2/workers-server.js';

await runWorkersServer(1);
