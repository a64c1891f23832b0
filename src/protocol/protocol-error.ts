/** A violation of the wire protocol: the connection that sent it is closed. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}
