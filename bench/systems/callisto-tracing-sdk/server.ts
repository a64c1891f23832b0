/** The OpenTelemetry SDK registered on both sides, sampling 1% of the traces (parent-based): what tracing costs with an SDK. */
import { variantServer } from '../../lib/callisto-variant.js';
import { registerTracingSdk } from '../../lib/tracing-sdk.js';

registerTracingSdk(0.01);
await variantServer({});
