/**
 * gRPC metadata ↔ Callisto attachments (docs/grpc.md, "Metadata"). Custom metadata are HTTP/2 headers;
 * a call's attachments are string pairs. Both directions leave out what HTTP/2 and gRPC own: pseudo
 * headers (`:path`…), `grpc-*` (status, timeout, encoding: the protocol's, not the caller's), and the
 * transport's own headers (`content-type`, `te`, `user-agent`, `host`, …). `authorization` and
 * `traceparent`/`tracestate` pass as they are, so the auth and tracing filters read them as over TCP.
 * Binary metadata (`…-bin`) keeps its base64 text: the attachment holds the wire form. Header names
 * are lowercase on HTTP/2, so attachments sent as metadata are lowercased.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import type { Attachments } from '../../core/invocation.js';

/** Headers that belong to HTTP/2 or the gRPC protocol, never to a call's attachments. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'te',
  'user-agent',
  'host',
  'accept',
  'accept-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** Whether header `name` (lowercase) is a call's metadata rather than the protocol's. */
export function isCallMetadata(name: string): boolean {
  return !name.startsWith(':') && !name.startsWith('grpc-') && !TRANSPORT_HEADERS.has(name);
}

/** The attachments the metadata in `headers` carry (a repeated header's values joined with ", "). */
export function attachmentsFromHeaders(headers: IncomingHttpHeaders): Attachments {
  const attachments: Attachments = Object.create(null) as Attachments;
  for (const name in headers) {
    if (!isCallMetadata(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    attachments[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return attachments;
}

/**
 * `attachments` as metadata headers, added to `headers`; keys that are not valid header names or are
 * the protocol's are left out (they cannot travel as gRPC metadata).
 */
export function addAttachmentHeaders(
  headers: OutgoingHttpHeaders,
  attachments: Attachments | undefined,
): void {
  if (attachments === undefined) return;
  for (const key in attachments) {
    const name = key.toLowerCase();
    if (!HEADER_NAME.test(name) || !isCallMetadata(name)) continue;
    const value = attachments[key]!;
    if (!HEADER_VALUE.test(value)) continue;
    headers[name] = value;
  }
}

/** gRPC's metadata key grammar: lowercase letters, digits, `-`, `_`, `.`. */
const HEADER_NAME = /^[0-9a-z_.-]+$/;
/** Printable ASCII and spaces (gRPC's ASCII-Value); anything else must be binary metadata. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;
