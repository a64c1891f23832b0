/** Callisto with `server.workers: 2`: two processes serve the port (see workers-server.ts). */
import { runWorkersServer } from './workers-server.js';

await runWorkersServer(2);
