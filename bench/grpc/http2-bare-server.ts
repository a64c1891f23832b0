/**
 * The gRPC bench's floor: what node:http2 itself costs for a gRPC unary call, with nothing of a
 * framework. `POST /bench.UserService/getUser` only: the request message's `id` read by hand (one
 * varint field), `benchService.getUser` awaited, the User written by hand in protobuf, then the
 * response headers, the one length-prefixed message and the `grpc-status: 0` trailers (the header
 * objects made once). Anything else is `UNIMPLEMENTED`. No limits, no metadata, no deadlines, no
 * filters: not a server to run, the number the others are read against.
 */
import http2 from 'node:http2';
import { type BenchUser, benchService } from '../lib/scenarios.js';
import { runServerMain } from '../lib/server-main.js';

const PATH = '/bench.UserService/getUser';
const RESPONSE_HEADERS = { ':status': 200, 'content-type': 'application/grpc+proto' };
const TRAILERS = { 'grpc-status': '0' };
const UNIMPLEMENTED = { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-status': '12' };

/** The `id` (field 1, varint) of a GetUserRequest; 0 when absent. */
function idOf(message: Buffer): number {
  let at = 0;
  while (at < message.length) {
    const tag = message[at++]!;
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = message[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    if (tag === 0x08) return value | 0;
  }
  return 0;
}

function varint(out: number[], value: number): void {
  let rest = value >>> 0;
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
}

/** A User message with its 5-byte gRPC prefix. */
function userFrame(user: BenchUser): Buffer {
  const name = Buffer.from(user.name);
  const email = Buffer.from(user.email);
  const head: number[] = [0x08];
  varint(head, user.id);
  head.push(0x12);
  varint(head, name.length);
  const middle: number[] = [0x1a];
  varint(middle, email.length);
  const tail: number[] = [0x20];
  varint(tail, user.age);
  tail.push(0x28, user.active ? 1 : 0);
  const length = head.length + name.length + middle.length + email.length + tail.length;
  const frame = Buffer.allocUnsafe(5 + length);
  frame[0] = 0;
  frame.writeUInt32BE(length, 1);
  let at = 5;
  at += Buffer.from(head).copy(frame, at);
  at += name.copy(frame, at);
  at += Buffer.from(middle).copy(frame, at);
  at += email.copy(frame, at);
  Buffer.from(tail).copy(frame, at);
  return frame;
}

function sendTrailers(this: http2.ServerHttp2Stream): void {
  this.sendTrailers(TRAILERS);
}

await runServerMain(async () => {
  const server = http2.createServer();
  server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    if (headers[':path'] !== PATH) {
      stream.respond(UNIMPLEMENTED, { endStream: true });
      return;
    }
    let body: Buffer | undefined;
    stream.on('data', (chunk: Buffer) => {
      body = body === undefined ? chunk : Buffer.concat([body, chunk]);
    });
    stream.on('end', async () => {
      const user = await benchService.getUser(idOf((body ?? Buffer.alloc(5)).subarray(5)));
      if (stream.destroyed) return;
      stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
      stream.once('wantTrailers', sendTrailers);
      stream.end(userFrame(user));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
