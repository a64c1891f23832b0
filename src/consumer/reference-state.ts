/**
 * What one reference (one `refer()`) works from, resolved once: its options and consumer config, its
 * mock mode, where its providers are, its serializer, filters and limits, and what it holds (for
 * releaseReference): the directories it uses and its strategies' background work.
 */

import type { ConsumerLimitState } from '../filters/consumer-limit.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { ReferenceOptions } from './reference-options.js';
import type { ReferenceTargets } from './reference-targets.js';
import type { ResolvedReferenceOptions } from './resolve-reference-options.js';
import type { UserFilters } from './user-filters.js';

/** What a reference holds until it is released. */
export interface ReferenceHolds {
  /** Its directories, by key. */
  readonly directories: Set<string>;
  /** Its strategies' closers. */
  readonly closers: Array<() => void>;
  released: boolean;
}

export interface ReferenceState {
  readonly definition: ServiceDefinition<unknown>;
  readonly options: ReferenceOptions<unknown>;
  /** `refer(Name)`, for messages. */
  readonly label: string;
  readonly resolved: ResolvedReferenceOptions;
  readonly serializer: Serializer;
  /** `mock: true | 'force'` answers from the mock without calling; `'fail'` when a call failed. */
  readonly mode: 'force' | 'fail' | undefined;
  /** Where its providers are (undefined with `mock: 'force'`). */
  readonly targets: ReferenceTargets | undefined;
  readonly filters: UserFilters;
  /** The reference's `limits`, when it sets any. */
  readonly limits: ConsumerLimitState | undefined;
  /** Announced in consumer records (`registerConsumer`). */
  readonly announce: boolean;
  readonly holds: ReferenceHolds;
}
