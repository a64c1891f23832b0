/**
 * The security headers every answer of every HTTP listener carries (the provider's entry, the gateway,
 * the admin port, the dashboard): one set, so that no listener is the one without them.
 *
 * - `x-content-type-options: nosniff`: a JSON answer that echoes a request is never read as HTML;
 * - `x-frame-options: DENY` and a content security policy with `frame-ancestors 'none'`: no page of
 *   another origin frames an answer;
 * - `content-security-policy: default-src 'none'` for answers that load nothing (JSON, text); a page
 *   states its own ({@link PAGE_CONTENT_SECURITY_POLICY}, the dashboard's, or a stylesheet's hash);
 * - `referrer-policy: no-referrer`: a link followed from a page does not carry its address away;
 * - `cache-control: no-store`: answers are live state (a page's files may say `no-cache`).
 */

/** What an answer that loads nothing may load: nothing, and no page may frame it. */
export const NOTHING_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** What the dashboard's page may load: its own files, nothing from elsewhere, no inline script. */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface SecurityHeaderOptions {
  /** The content security policy. Default {@link NOTHING_CONTENT_SECURITY_POLICY}. */
  readonly contentSecurityPolicy?: string;
  /** `cache-control`. Default `no-store`. */
  readonly cacheControl?: string;
}

/** The one set with its defaults: what JSON and text answers carry. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze(securityHeaders());

/** The one set, with a page's own content security policy or caching when it needs them. */
export function securityHeaders(options: SecurityHeaderOptions = {}): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': options.contentSecurityPolicy ?? NOTHING_CONTENT_SECURITY_POLICY,
    'referrer-policy': 'no-referrer',
    'cache-control': options.cacheControl ?? 'no-store',
  };
}
