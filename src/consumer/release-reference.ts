/** `releaseReference(reference)`: lets go of a reference that is no longer needed. */

/** @internal Where a reference keeps its release function. */
export const releaseKey = Symbol('callisto.release');

/**
 * Releases a reference made by `app.refer()`: its cluster strategies stop, and the service's
 * directory (registry subscriptions, consumer record, connections to its providers) is closed once no
 * other reference holds it. Calls on it afterwards fail with `Shutdown`. For references made per
 * request (a tool that calls services by name); an app's long-lived references end with `app.close()`.
 * Idempotent.
 */
export function releaseReference(reference: object): Promise<void> {
  const release = (reference as Record<symbol, (() => Promise<void>) | undefined>)[releaseKey];
  if (release === undefined) {
    return Promise.reject(new TypeError('releaseReference() needs a reference made by app.refer()'));
  }
  return release();
}
