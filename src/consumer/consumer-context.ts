/**
 * What every reference of one consumer shares (made once by createConsumer): its settings and
 * extensions, its directories, the app's own provider, the app's consumer filters and where metrics go.
 * Each reference's own state (reference-state.ts) sits beside it.
 */
import type { NamedFilter } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { LogFields } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { ConsumerSettings } from './consumer-settings.js';
import type { DirectorySet } from './directory-set.js';
import type { InProcessProvider } from './in-process.js';
import type { MockCatalog } from './mock-methods.js';
import type { UserFilters } from './user-filters.js';

export interface ConsumerContext {
  readonly settings: ConsumerSettings;
  readonly extensions: ExtensionRegistry;
  readonly serializers: SerializerTable;
  readonly directories: DirectorySet;
  /** The app's own provider, for in-process calls. */
  readonly inProcess: InProcessProvider;
  /** The methods with a mock per service, announced in the consumer records. */
  readonly mocks: MockCatalog;
  /** The app's consumer filters (`filters.consumer`). */
  readonly appFilters: UserFilters;
  /** The `credentials` filter of `consumer.credentials`, made once; undefined when unset. */
  readonly credentials: NamedFilter | undefined;
  /** Where the metrics filters count (none: no metrics filters). */
  readonly metrics: MetricsStore | undefined;
  /** Background work of the strategies to stop when the consumer closes (failback timers). */
  readonly closers: Set<() => void>;
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) => void;
}
