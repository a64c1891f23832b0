/** Metrics off (`metrics: false`), tracing as by default (no SDK registered): what the metrics filters cost. */
import { variantServer } from '../../lib/callisto-variant.js';

await variantServer({ metrics: false });
