/**
 * The HTTP client every HTTP system's bench client uses (http-bare, callisto-http, callisto-protobuf), so
 * they differ only in their servers: node:http with a keep-alive agent, `POST /<service>/<method>` with
 * a body, the answer read whole.
 */
import http from 'node:http';

/** Sockets the agent keeps open; more calls in flight queue in the agent. */
export const HTTP_SOCKETS = 64;

export interface HttpPoster {
  post(path: string, body: Uint8Array | string, contentType: string): Promise<Buffer>;
  close(): void;
}

export function createHttpPoster(port: number): HttpPoster {
  const agent = new http.Agent({ keepAlive: true, maxSockets: HTTP_SOCKETS });
  return {
    post(path, body, contentType) {
      return new Promise((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path,
            agent,
            headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => {
              const answer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
              if (response.statusCode !== 200) reject(new Error(`HTTP ${response.statusCode}: ${answer}`));
              else resolve(answer);
            });
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** A JSON client of `/<service>/<method>` (an array of arguments in, the JSON result out). */
export function jsonClient(port: number, service: string) {
  const poster = createHttpPoster(port);
  const call = async (method: string, args: unknown[]): Promise<unknown> =>
    JSON.parse(
      (await poster.post(`/${service}/${method}`, JSON.stringify(args), 'application/json')).toString(),
    );
  return {
    say: (msg: string) => call('say', [msg]) as Promise<string>,
    getUser: (id: number) => call('getUser', [id]) as never,
    close: () => poster.close(),
  };
}
