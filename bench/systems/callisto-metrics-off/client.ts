/** Metrics off (`metrics: false`), tracing as by default (no SDK registered): what the metrics filters cost. */
import { variantClient } from '../../lib/callisto-variant.js';

await variantClient({ metrics: false });
