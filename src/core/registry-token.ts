/**
 * `server.auth.registryToken` (Dubbo's `token: true`): a provider publishes a random token with its
 * records and refuses calls that do not carry it; a consumer that found the provider through a registry
 * sends the record's token in this attachment. The token is never shown (`REDACTED` in tools).
 */
export const REGISTRY_TOKEN_ATTACHMENT = 'callisto-registry-token';

/** What tools show in place of a record's token. */
export const REDACTED_TOKEN = '[redacted]';
