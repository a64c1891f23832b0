/**
 * One method of a reference, built at its first use: its route, timeout and flags, its call chain
 * (consumer-chain.ts) and, behind it, the terminal: the mock (`mock: 'force'`), or its cluster over the
 * service's directory, made at the first call (the app may provide the service after `refer()`) and
 * switched to the mock by an operator's mock switch (runtime control).
 */
import type { ClusterInvoker } from '../cluster/cluster.js';
import { compileChain, orderFilters } from '../core/filter.js';
import type { Invoker } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { createConsumerLimitState } from '../filters/consumer-limit.js';
import type { OutcomeRecorder } from '../filters/outlier.js';
import { hasLimits } from '../governance/limit-options.js';
import type { MockMode } from '../registry/override-record.js';
import { methodSerializer } from '../serialization/method-serializer.js';
import type { MethodDeclaration } from '../service/define-service.js';
import { mockAnswer, runCallChain } from './call-chain.js';
import type { ClientInvocation } from './client-invocation.js';
import { type AttemptChainNeeds, attemptFilters, callFilters } from './consumer-chain.js';
import type { ConsumerContext } from './consumer-context.js';
import type { ConsumerConfig } from './consumer-options.js';
import type { Directory } from './directory.js';
import { hopPolicyOf } from './hop-context.js';
import { checkIdempotentOnly } from './idempotent-only.js';
import { createMethodCluster } from './method-cluster.js';
import { MethodRoute } from './method-route.js';
import { hasMock } from './mock-methods.js';
import { callWithMockSwitch } from './mock-switch.js';
import type { MethodRuntime } from './reference.js';
import type { MethodReferenceOptions } from './reference-options.js';
import type { ReferenceState } from './reference-state.js';
import { joinUserFilters, userFilters } from './user-filters.js';

export interface MethodRuntimeInit {
  readonly consumer: ConsumerContext;
  readonly reference: ReferenceState;
  readonly name: string;
}

const NO_DETECTOR: OutcomeRecorder = { record() {} };

export function createMethodRuntime(init: MethodRuntimeInit): MethodRuntime {
  const { consumer, reference, name } = init;
  const { definition, options, label, mode } = reference;
  const declaration: MethodDeclaration = definition.methods?.[name] ?? {};
  const methodOptions: MethodReferenceOptions =
    (options.methods as Record<string, MethodReferenceOptions> | undefined)?.[name] ?? {};
  const config = reference.resolved.configOf(name);
  const base = reference.resolved.reference;
  const idempotent = methodOptions.idempotent ?? declaration.idempotent ?? false;
  if (mode !== 'force') {
    checkIdempotentOnly({
      label,
      method: name,
      cluster: config.cluster,
      factory: consumer.extensions.get('cluster', config.cluster),
      idempotent,
      setOn: { method: methodOptions.cluster, reference: options.cluster },
    });
  }
  const user = joinUserFilters(
    consumer.appFilters,
    reference.filters,
    userFilters(methodOptions.filters ?? [], `${label}.methods.${name}.filters`),
  );
  const mock = () => mockAnswer(options.mockImpl, name, declaration);
  const metrics = consumer.metrics?.method('consumer', definition, name);
  const attemptNeeds = (directory: Directory | undefined): AttemptChainNeeds => ({
    label: `${definition.name}.${name}`,
    attemptTimeoutMs: config.attemptTimeoutMs,
    credentials: consumer.credentials,
    outlierDetection: config.outlierDetection,
    detector: () => (directory === undefined ? NO_DETECTOR : outlierDetectorOf(directory, config)),
    metrics,
    throttlingK: config.adaptiveThrottling ? config.adaptiveThrottlingK : undefined,
  });
  const terminal = mode === 'force' ? forcedMock(mock()) : clusterTerminal();

  function clusterTerminal(): Invoker {
    let cluster: ClusterInvoker | undefined;
    let directory: Directory | undefined;
    const mockOf = hasMock(options.mockImpl, name, declaration) ? mock : undefined;
    // An operator's mock switch for this method (runtime control), read per call.
    const switched = (switch_: MockMode | undefined, call: ClientInvocation) =>
      callWithMockSwitch(switch_, call, cluster!, mockOf?.());
    return (invocation) => {
      if (reference.holds.released) {
        return Promise.reject(new RpcError('Shutdown', `this reference to ${definition.name} was released`));
      }
      if (cluster === undefined) {
        // Decided at the first call: the app may provide the service after refer().
        // (an HTTP or gRPC reference calls over the wire, even a service the app provides itself)
        const protocol = reference.targets?.protocol ?? 'callisto';
        const inProcess = base.injvm && protocol === 'callisto' && consumer.inProcess.provides(definition);
        const found = consumer.directories.find(
          definition,
          inProcess ? 'in-process' : reference.targets!,
          reference.announce,
        );
        directory = found.directory;
        if (!reference.holds.directories.has(found.key)) {
          reference.holds.directories.add(found.key);
          consumer.directories.hold(found.key);
        }
        cluster = createMethodCluster({
          label: `${definition.name}.${name}`,
          extensions: consumer.extensions,
          directory,
          config,
          hashArguments: methodOptions.hashArguments,
          attemptFilters: attemptFilters(user.attempt, attemptNeeds(directory)),
          log: consumer.log,
          onRetriesExhausted: options.onRetriesExhausted,
        });
        if (cluster.close) {
          const close = () => cluster!.close!();
          consumer.closers.add(close);
          reference.holds.closers.push(close);
        }
      }
      const call = invocation as ClientInvocation;
      if (directory!.isReady) {
        const mocks = directory!.mocks;
        return mocks === undefined ? cluster(call) : switched(mocks.get(name), call);
      }
      return directory!.ready.then(() => switched(directory!.mocks?.get(name), call));
    };
  }

  const limits = [
    ...(reference.limits ? [reference.limits] : []),
    ...(hasLimits(methodOptions.limits)
      ? [createConsumerLimitState(`${label}.methods.${name}`, methodOptions.limits!)]
      : []),
  ];
  const cache = methodOptions.cache === false ? undefined : (methodOptions.cache ?? declaration.cache);
  const fallback = mode === 'fail' ? mock() : undefined;
  const callChain = compileChain(
    callFilters(user.call, {
      metrics,
      tracing: consumer.settings.tracing,
      limits,
      cache,
      encode: (args) => reference.serializer.encode(args),
      mockFallback: fallback === undefined ? undefined : (invocation) => fallback(invocation.args),
    }),
    terminal,
  );
  const attemptNames =
    mode === 'force'
      ? []
      : orderFilters(attemptFilters(user.attempt, attemptNeeds(undefined))).map((filter) => filter.name);
  return {
    name,
    // a format with bodies per method (protobuf) gives this method's own
    route: new MethodRoute(
      definition,
      name,
      methodSerializer(reference.serializer, definition, name, 'consumer'),
      consumer.extensions.get('compressor', config.compressor),
    ),
    // a stream's deadline is the whole stream's: only a method's own timeout applies (default none)
    timeoutMs:
      methodOptions.timeoutMs ??
      declaration.timeoutMs ??
      (declaration.stream === undefined ? base.timeoutMs : 0),
    stream: declaration.stream,
    oneway: methodOptions.oneway ?? declaration.oneway ?? false,
    idempotent,
    invoke: runCallChain(callChain),
    filters: { call: callChain.names, attempt: attemptNames },
    hops: hopPolicyOf(config),
  };
}

/** `mock: 'force'`: every call is answered by the mock. */
function forcedMock(answer: (args: unknown[]) => unknown): Invoker {
  return async (invocation) => answer(invocation.args);
}

/** The service's outlier detector (made by the directory on first use). */
function outlierDetectorOf(directory: Directory, config: ConsumerConfig): OutcomeRecorder {
  return directory.outlierDetector({
    maxEjectionRatio: config.maxEjectionRatio,
    consecutiveFailures: config.ejectAfterFailures,
    baseEjectionMs: config.ejectionMs,
    maxEjectionMs: Math.max(config.ejectionMs, 300_000),
  });
}
