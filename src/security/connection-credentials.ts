/**
 * Credentials a consumer's connection may present once instead of with every call (docs/security.md,
 * "Authentication per connection"). The `credentials` filter marks the attachment objects it made,
 * with what they hold besides the `authorization` attachment; the TCP connection (consumer/
 * client-connection.ts) presents a marked object's credentials in an `authenticate` event, once for as
 * long as they stay the same, and sends the rest of the attachments with the call. Attachments a caller
 * gave itself (`withOptions(ref, { credentials })`) are never marked: they travel with their call and
 * are checked with it.
 */
import type { Attachments } from '../core/invocation.js';

/** Marked attachment objects -> the same attachments without the credentials. */
const withoutCredentials = new WeakMap<object, Attachments>();

/** Marks `attachments` (made by the credentials filter) as `rest` plus connection credentials. */
export function markConnectionCredentials(attachments: Attachments, rest: Attachments): void {
  withoutCredentials.set(attachments, rest);
}

/** The attachments `attachments` holds besides connection credentials; undefined when it is not marked. */
export function attachmentsWithoutCredentials(attachments: Attachments): Attachments | undefined {
  return withoutCredentials.get(attachments);
}
