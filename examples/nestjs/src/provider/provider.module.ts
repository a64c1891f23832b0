import { Module } from '@nestjs/common';
import { CallistoModule } from 'callisto/nestjs';
import { REGISTRY } from '../contract';
import { GreetingService } from './greeting.service';
import { UsersRpc } from './users.rpc';

@Module({
  imports: [
    CallistoModule.forRoot({ application: 'users', registry: REGISTRY }),
    // Exposes UsersRpc, as Nest built it, once the application has started.
    CallistoModule.forFeature({ services: [UsersRpc] }),
  ],
  providers: [GreetingService, UsersRpc],
})
export class ProviderModule {}
