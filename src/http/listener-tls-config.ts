/**
 * A listener's own TLS keys as configuration writes them (`admin.tls`, the gateway's `tls`): kept apart
 * from listener-tls.ts so that the public option types that name it need no Node.js type declarations.
 */
export interface ListenerTlsConfig {
  /** The private key, PEM text or a file path; '' for none. */
  readonly key: string;
  /** The certificate chain, PEM text or a file path; '' for none. */
  readonly cert: string;
}
