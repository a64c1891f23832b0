/** The dashboard: `callisto dashboard` serves it (src/cli/commands/dashboard.ts). */
export { createDashboard, type Dashboard, type DashboardDependencies } from './create-dashboard.js';
export {
  DashboardOptionError,
  type DashboardOptions,
  DEFAULT_DASHBOARD_OPTIONS,
  resolveDashboardOptions,
} from './dashboard-options.js';
