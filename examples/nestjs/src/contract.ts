// The contract both applications share (in a real project, a package of its own).
import { defineService } from 'callisto';

export interface User {
  id: number;
  name: string;
  joinedAt: Date;
}

export interface UserService {
  getUser(id: number): Promise<User>;
  greet(id: number): Promise<string>;
}

export const UserServiceDef = defineService<UserService>('example.UserService', {
  version: '1.0.0',
  methods: {
    getUser: { idempotent: true },
    greet: { idempotent: true },
  },
});

/** Both applications find each other here, relative to where they start: start them from one directory. */
export const REGISTRY = 'file://.callisto/registry';
