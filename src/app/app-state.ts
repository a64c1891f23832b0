/** The lifecycle of an app: one tagged state, not a handful of booleans. */
export type AppState = 'created' | 'starting' | 'running' | 'stopping' | 'closed';
