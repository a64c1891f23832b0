/** `asyncCallContext: true` on the server: what AsyncLocalStorage per call costs. */
import { variantServer } from '../../lib/callisto-variant.js';

await variantServer({ asyncCallContext: true });
