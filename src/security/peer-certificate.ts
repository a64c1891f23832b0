/** What a provider knows of a caller's client certificate (mutual TLS), as the `tls` transport keeps it. */
export interface PeerCertificate {
  /** Whether it verified against `server.tls.ca`. */
  readonly authorized: boolean;
  /** Why not, when it did not (`CERT_HAS_EXPIRED`, …). */
  readonly authorizationError: string | undefined;
  /** The subject's common name (CN), '' when none. */
  readonly commonName: string;
  /** The subject alternative names as written in the certificate (`DNS:orders`, `URI:spiffe://…`). */
  readonly altNames: readonly string[];
  /** SHA-256 fingerprint, `AB:CD:…`. */
  readonly fingerprint256: string;
}
