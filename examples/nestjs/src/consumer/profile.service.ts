import { Injectable, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { type Remote, RpcError } from 'callisto';
import { InjectReference } from 'callisto/nestjs';
import { type UserService, UserServiceDef } from '../contract';

/** A Nest service that calls the provider through the reference CallistoModule.forFeature() provides. */
@Injectable()
export class ProfileService {
  constructor(@InjectReference(UserServiceDef) private readonly users: Remote<UserService>) {}

  async profile(id: number): Promise<{ name: string; joinedAt: string; greeting: string }> {
    try {
      const [user, greeting] = await Promise.all([this.users.getUser(id), this.users.greet(id)]);
      return { name: user.name, joinedAt: user.joinedAt.toISOString(), greeting };
    } catch (error) {
      if (!RpcError.is(error)) throw error;
      // The provider's own error arrives with its name and message.
      if (error.code === 'ProviderError' && error.name === 'RangeError')
        throw new NotFoundException(error.message);
      if (error.code === 'NoProvider' || error.code === 'Network') {
        throw new ServiceUnavailableException(error.message);
      }
      throw error;
    }
  }
}
