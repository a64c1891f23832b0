/** The adaptive concurrency limit off on the server; the client is Callisto's default. */
import { variantClient } from '../../lib/callisto-variant.js';

await variantClient({});
