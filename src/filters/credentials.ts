/**
 * `credentials` (attempt): sends the consumer's credentials with every attempt, in the
 * `authorization` attachment (`Bearer <token>`), for the provider's `auth` filter. The token is fixed
 * (`consumer.credentials`, a reference's `filters: [credentialsFilter(token)]`) or comes from a function
 * called per attempt (a refreshed JWT). Credentials given for one call (`withOptions(ref, { credentials
 * })`) win over a filter's; a reference's filter wins over the app's (it runs after it).
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { type Attachments, nonEmptyAttachments } from '../core/invocation.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import { AUTH_ATTACHMENT, bearer } from '../security/authenticator.js';
import {
  attachmentsWithoutCredentials,
  markConnectionCredentials,
} from '../security/connection-credentials.js';

/** A fixed token, or a function returning the token to send now. */
export type CredentialSource = string | (() => string);

/**
 * Attachment objects a credentials filter made are marked (security/connection-credentials.ts) with
 * what they hold besides the credentials: anything else carrying credentials came with the call. Over
 * a TCP connection the marked credentials are presented once for the connection, not with every call.
 */
const made = (attachments: Attachments): boolean => attachmentsWithoutCredentials(attachments) !== undefined;

export function credentialsFilter(source: CredentialSource): NamedFilter {
  if (typeof source === 'string' && source === '') throw new TypeError('credentialsFilter: an empty token');
  const fixed = typeof source === 'string' ? bearer(source) : undefined;
  /** A call with no attachments of its own (the usual case) gets this one object, made once. */
  const alone = fixed === undefined ? undefined : Object.freeze({ [AUTH_ATTACHMENT]: fixed });
  if (alone !== undefined) markConnectionCredentials(alone, NO_ATTACHMENTS);
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
      if (present !== undefined && !made(attachments)) return; // the call's own credentials
      const value = fixed ?? bearer((source as () => string)());
      if (present === value) return;
      const rest = present === undefined ? attachments : attachmentsWithoutCredentials(attachments)!;
      const next = { ...rest, [AUTH_ATTACHMENT]: value };
      markConnectionCredentials(next, rest);
      invocation.attachments = next;
    },
  });
}
