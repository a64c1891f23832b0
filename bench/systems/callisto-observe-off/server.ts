/** Metrics and tracing off (`metrics: false, tracing: false`): against callisto-metrics-off, what the tracing filters cost with no SDK registered. */
import { variantServer } from '../../lib/callisto-variant.js';

await variantServer({ metrics: false, tracing: false });
