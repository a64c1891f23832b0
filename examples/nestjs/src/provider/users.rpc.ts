import { Injectable } from '@nestjs/common';
import { RpcService } from 'callisto';
import { type User, type UserService, UserServiceDef } from '../contract';
import { GreetingService } from './greeting.service';

// @RpcService: Callisto exposes this class as example.UserService (it must implement UserService, or
// this line does not compile); @Injectable: Nest builds it, with its constructor's dependencies.
@RpcService(UserServiceDef)
@Injectable()
export class UsersRpc implements UserService {
  constructor(private readonly greeting: GreetingService) {}

  async getUser(id: number): Promise<User> {
    if (id < 1) throw new RangeError(`no user ${id}`);
    return { id, name: `user-${id}`, joinedAt: new Date(1_700_000_000_000) };
  }

  async greet(id: number): Promise<string> {
    const user = await this.getUser(id);
    return this.greeting.phrase(user.name);
  }
}
