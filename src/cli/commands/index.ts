/**
 * The commands, one file each. Each is a factory taking the streams it writes to and returning a
 * commander Command; `program.ts` adds them in this order.
 */
import type { Command } from 'commander';
import type { CliIo } from '../output.js';
import { benchCommand } from './bench.js';
import { callCommand } from './call.js';
import { configCommand } from './config.js';
import { dashboardCommand } from './dashboard.js';
import { disableCommand } from './disable.js';
import { doctorCommand } from './doctor.js';
import { enableCommand } from './enable.js';
import { gatewayCommand } from './gateway.js';
import { lsCommand } from './ls.js';
import { mockCommand } from './mock.js';
import { overridesCommand } from './overrides.js';
import { protoCommand } from './proto.js';
import { weightCommand } from './weight.js';

export const COMMANDS: ReadonlyArray<(io: CliIo) => Command> = [
  lsCommand,
  callCommand,
  benchCommand,
  configCommand,
  doctorCommand,
  gatewayCommand,
  disableCommand,
  enableCommand,
  weightCommand,
  mockCommand,
  overridesCommand,
  dashboardCommand,
  protoCommand,
];
