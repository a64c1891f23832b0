/** The bench client's shared-secret token (bench only). */
export const BENCH_TOKEN = 'bench-client-token-0123456789abcdef';
