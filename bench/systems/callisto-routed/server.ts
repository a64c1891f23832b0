/** The routed system's server: Callisto's own bench server, unchanged (the rule lives on the client's side). */
import '../callisto/server.js';
