/**
 * The standard gRPC health service, `grpc.health.v1.Health` (github.com/grpc/grpc/doc/health-checking.md),
 * as load balancers and Kubernetes' gRPC probes call it: `Check` answers the status of the server
 * (service `""`) or of one served service by its gRPC name; `Watch` streams the status, then every
 * change. SERVING once the provider listens, NOT_SERVING from the start of its graceful shutdown (with
 * readiness). An unknown service is NOT_FOUND to `Check` and SERVICE_UNKNOWN to `Watch`. Messages are
 * written by hand (protocol/grpc/proto-wire.ts): `HealthCheckRequest { string service = 1; }`,
 * `HealthCheckResponse { ServingStatus status = 1; }`.
 */

import { ProtoWriter, readProtoFields, stringField } from '../../protocol/grpc/proto-wire.js';
import { GrpcStatus } from '../../protocol/grpc/status.js';
import type { GrpcBuiltin, GrpcBuiltinCall } from './grpc-call.js';
import type { GrpcRoutes } from './grpc-routes.js';

export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** `grpc.health.v1.HealthCheckResponse.ServingStatus`. */
export const ServingStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

export interface GrpcHealth {
  /** The health service's methods by path. */
  readonly methods: ReadonlyMap<string, GrpcBuiltin>;
  /** The provider listens: SERVING. */
  ready(): void;
  /** Shutdown started: NOT_SERVING, for good. */
  shutDown(): void;
  /** Ends every Watch (the entry closes): UNAVAILABLE, the server is gone. */
  endWatches(): void;
  /** The status of `service` ('' for the server). */
  statusOf(service: string): number;
}

const response = (status: number): Buffer => new ProtoWriter().uint(1, status).finish();

export function createGrpcHealth(routes: GrpcRoutes): GrpcHealth {
  let state: 'starting' | 'serving' | 'shut down' = 'starting';
  const watchers = new Set<() => void>();
  const watching = new Set<GrpcBuiltinCall>();
  const changed = (): void => {
    for (const watcher of watchers) watcher();
  };
  const known = (service: string): boolean => service === '' || routes.servicesNamed(service).length > 0;
  const statusOf = (service: string): number => {
    if (!known(service)) return ServingStatus.SERVICE_UNKNOWN;
    return state === 'serving' ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };

  /** The one request message's `service`, then `answer` with it. */
  const withRequest = (call: GrpcBuiltinCall, answer: (service: string) => void): void => {
    let service: string | undefined;
    call.onMessage((bytes) => {
      try {
        service = stringField(readProtoFields(bytes), 1);
      } catch {
        service = undefined;
      }
    });
    call.onEnd(() => {
      if (service === undefined) {
        call.exchange.end({
          status: GrpcStatus.INVALID_ARGUMENT,
          message: 'expected one HealthCheckRequest',
        });
        return;
      }
      answer(service);
    });
  };

  const check: GrpcBuiltin = (call) =>
    withRequest(call, (service) => {
      const status = statusOf(service);
      if (status === ServingStatus.SERVICE_UNKNOWN) {
        call.exchange.end({ status: GrpcStatus.NOT_FOUND, message: `unknown service ${service}` });
        return;
      }
      call.exchange.send(response(status));
      call.exchange.end({ status: GrpcStatus.OK });
    });

  const watch: GrpcBuiltin = (call) =>
    withRequest(call, (service) => {
      let last = -1;
      const send = (): void => {
        const status = statusOf(service);
        if (status === last) return;
        last = status;
        call.exchange.send(response(status));
      };
      send();
      watchers.add(send);
      watching.add(call);
      call.onClose(() => {
        watchers.delete(send);
        watching.delete(call);
      });
    });

  return {
    methods: new Map([
      [`/${HEALTH_SERVICE}/Check`, check],
      [`/${HEALTH_SERVICE}/Watch`, watch],
    ]),
    ready() {
      if (state !== 'starting') return;
      state = 'serving';
      changed();
    },
    shutDown() {
      if (state === 'shut down') return;
      state = 'shut down';
      changed();
    },
    endWatches() {
      for (const call of watching) {
        call.exchange.end({ status: GrpcStatus.UNAVAILABLE, message: 'the server is shutting down' });
      }
      watching.clear();
      watchers.clear();
    },
    statusOf,
  };
}
