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
  /** Keep callContext() for the whole of a provider method, past its first await (AsyncLocalStorage; costs a little per call, docs/observability.md). Default false. */
  asyncCallContext: z.boolean(),
});

export type ObservabilityConfig = z.infer<typeof observabilityConfigSchema>;

export const DEFAULT_OBSERVABILITY_CONFIG: ObservabilityConfig = {
  metrics: true,
  tracing: true,
  asyncCallContext: false,
};
