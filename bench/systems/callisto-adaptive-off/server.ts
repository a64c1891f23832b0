/** The adaptive concurrency limit off (`server.adaptiveLimit: false`): what the limit and its overload gate cost a provider that is not overloaded. */
import { variantServer } from '../../lib/callisto-variant.js';

await variantServer({ server: { adaptiveLimit: false } });
