/** Metrics and tracing off (`metrics: false, tracing: false`): against callisto-metrics-off, what the tracing filters cost with no SDK registered. */
import { variantClient } from '../../lib/callisto-variant.js';

await variantClient({ metrics: false, tracing: false });
