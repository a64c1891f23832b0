/** The start-up line of an app: every port it listens on, so a person knows what to open or probe. */
export interface ListeningPorts {
  application: string;
  /** The RPC address announced to consumers (none when nothing is provided). */
  rpc: string | undefined;
  /** The HTTP/JSON entry's `host:port`, when on. */
  http: string | undefined;
  /** The admin endpoints' `host:port`, when on. */
  admin: string | undefined;
}

/** `web serving on 10.0.0.5:20880; HTTP entry on 0.0.0.0:8080; admin endpoints on 127.0.0.1:9464`. */
export function listeningLine(ports: ListeningPorts): string | undefined {
  const parts: string[] = [];
  if (ports.rpc !== undefined && ports.rpc !== '') parts.push(`${ports.application} serving on ${ports.rpc}`);
  if (ports.http !== undefined) parts.push(`HTTP entry on ${ports.http}`);
  if (ports.admin !== undefined) {
    parts.push(
      parts.length === 0
        ? `${ports.application} admin endpoints on ${ports.admin}`
        : `admin endpoints on ${ports.admin}`,
    );
  }
  return parts.length === 0 ? undefined : parts.join('; ');
}
