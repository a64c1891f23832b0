/**
 * The commands, one file each. Each is a factory taking the streams it writes to and returning a
 * commander Command; `program.ts` adds them in this order. Still to come, each in its own file, on the
 * runtime control of the "Security and traffic governance" issue: `disable`, `enable`, `weight`, `mock`.
 */
import type { Command } from 'commander';
import type { CliIo } from '../output.js';
import { benchCommand } from './bench.js';
import { callCommand } from './call.js';
import { configCommand } from './config.js';
import { dashboardCommand } from './dashboard.js';
import { doctorCommand } from './doctor.js';
import { gatewayCommand } from './gateway.js';
import { lsCommand } from './ls.js';

export const COMMANDS: ReadonlyArray<(io: CliIo) => Command> = [
  lsCommand,
  callCommand,
  benchCommand,
  configCommand,
  doctorCommand,
  gatewayCommand,
  dashboardCommand,
];
