/** The client of the `server.workers` systems: four connections (four consumer apps), round robin. */
import '../callisto-workers2/client.js';
