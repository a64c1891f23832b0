/**
 * The contract both sides share, like Dubbo's "api" jar: the interface and its definition.
 */
import { defineService } from '../../src/index.js';

export interface User {
  id: number;
  name: string;
  email: string;
  joinedAt: Date;
}

export interface UserService {
  getUser(id: number): Promise<User>;
  say(message: string): Promise<string>;
  /** Which provider process answered (to show load balancing). */
  whoAmI(): Promise<string>;
}

export const UserServiceDef = defineService<UserService>('example.UserService', {
  version: '1.0.0',
  methods: {
    getUser: { idempotent: true },
    say: { idempotent: true },
    whoAmI: { idempotent: true },
  },
});
