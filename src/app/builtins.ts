/** Importing this module registers every built-in extension into `builtinExtensions`. */
import '../serialization/index.js';
import '../loadbalance/index.js';
import '../cluster/index-policies.js';
import '../cluster/builtin-clusters.js';
import '../registry/builtin-registries.js';
import '../transport/index.js';
