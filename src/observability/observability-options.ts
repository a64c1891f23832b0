/**
 * The observability keys of the app's configuration (declared here; config/callisto-config.ts composes
 * them, docs/configuration.md is generated from the comments).
 */
import { z } from 'zod';

export const observabilityConfigSchema = z.strictObject({
  /** Count calls per method on both sides (the `metrics` filters; Prometheus at the admin port's /metrics and app.metrics()). Default true. */
  metrics: z.boolean(),
  /** OpenTelemetry spans per call through @opentelemetry/api, when an SDK is registered before the app is created (otherwise the tracing filters are left out: free). Default true. */
  tracing: z.boolean(),
  /** Keep callContext() for the whole of a provider method, past its first await (AsyncLocalStorage; costs a little per call, docs/observability.md). An app that refers services turns it on by itself, so that the calls its methods make inherit from the call they serve (docs/cluster.md, "Context across hops"). Default false. */
  asyncCallContext: z.boolean(),
  /** Length of the windows /stats (the admin page, the dashboard) reports each method's min, max and mean latency over, ms: the window being filled and the whole one before it. Default 60000. */
  statsWindowMs: z.number().int().min(100),
});

export type ObservabilityConfig = z.infer<typeof observabilityConfigSchema>;

export const DEFAULT_OBSERVABILITY_CONFIG: ObservabilityConfig = {
  metrics: true,
  tracing: true,
  asyncCallContext: false,
  statsWindowMs: 60_000,
};
