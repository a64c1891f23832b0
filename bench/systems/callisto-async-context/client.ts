/** `asyncCallContext: true` on the server: what AsyncLocalStorage per call costs. */
import { variantClient } from '../../lib/callisto-variant.js';

await variantClient({});
