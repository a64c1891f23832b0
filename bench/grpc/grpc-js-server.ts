/**
 * The gRPC bench's reference server: @grpc/grpc-js (the pure-JS gRPC implementation most Node services
 * run) serving the bench service from bench.proto with proto-loader, `getUser` and `say` as
 * lib/scenarios.ts's `benchService` answers them.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { benchService } from '../lib/scenarios.js';
import { runServerMain } from '../lib/server-main.js';

const protoPath = fileURLToPath(new URL('../systems/callisto-protobuf/bench.proto', import.meta.url));

await runServerMain(async () => {
  const definition = protoLoader.loadSync(protoPath, { keepCase: true, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    bench: { UserService: { service: grpc.ServiceDefinition } };
  };
  const server = new grpc.Server();
  server.addService(loaded.bench.UserService.service, {
    getUser: (call: grpc.ServerUnaryCall<{ id: number }, unknown>, done: grpc.sendUnaryData<unknown>) => {
      Promise.resolve(benchService.getUser(call.request.id)).then((user) => done(null, user), done);
    },
    say: (call: grpc.ServerUnaryCall<{ msg: string }, unknown>, done: grpc.sendUnaryData<unknown>) => {
      Promise.resolve(benchService.say(call.request.msg)).then((value) => done(null, { value }), done);
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    port,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
});
