/** The cache system's server: Callisto's own bench server (the cache is on the consumer). */
import '../callisto/server.js';
