/**
 * `credentials` (attempt): sends the consumer's credentials with every attempt, in the
 * `authorization` attachment (`Bearer <token>`), for the provider's `auth` filter. The token is fixed
 * (`consumer.credentials`, a reference's `filters: [credentialsFilter(token)]`) or comes from a function
 * called per attempt (a refreshed JWT). Credentials given for one call (`withOptions(ref, { credentials
 * })`) win over a filter's; a reference's filter wins over the app's (it runs after it).
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { nonEmptyAttachments } from '../core/invocation.js';
import { AUTH_ATTACHMENT, bearer } from '../security/authenticator.js';

/** A fixed token, or a function returning the token to send now. */
export type CredentialSource = string | (() => string);

/** Attachment objects a credentials filter made (anything else carrying credentials came with the call). */
const made = new WeakSet<object>();

export function credentialsFilter(source: CredentialSource): NamedFilter {
  if (typeof source === 'string' && source === '') throw new TypeError('credentialsFilter: an empty token');
  const fixed = typeof source === 'string' ? bearer(source) : undefined;
  /** A call with no attachments of its own (the usual case) gets this one object, made once. */
  const alone = fixed === undefined ? undefined : Object.freeze({ [AUTH_ATTACHMENT]: fixed });
  if (alone !== undefined) made.add(alone);
  return defineFilter({
    name: 'credentials',
    position: 'attempt',
    order: FILTER_ORDER.attempt.credentials,
    start(invocation) {
      const attachments = invocation.attachments;
      if (alone !== undefined && nonEmptyAttachments(attachments) === undefined) {
        invocation.attachments = alone;
        return;
      }
      const present = attachments[AUTH_ATTACHMENT];
      if (present !== undefined && !made.has(attachments)) return; // the call's own credentials
      const value = fixed ?? bearer((source as () => string)());
      if (present === value) return;
      const next = { ...attachments, [AUTH_ATTACHMENT]: value };
      made.add(next);
      invocation.attachments = next;
    },
  });
}
