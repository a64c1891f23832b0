import { Module } from '@nestjs/common';
import { CallistoModule } from 'callisto/nestjs';
import { REGISTRY, UserServiceDef } from '../contract';
import { ProfileService } from './profile.service';
import { UsersController } from './users.controller';

@Module({
  imports: [
    CallistoModule.forRoot({ application: 'web', registry: REGISTRY }),
    // Provides the reference that @InjectReference(UserServiceDef) injects.
    CallistoModule.forFeature({
      references: [{ definition: UserServiceDef, options: { timeoutMs: 2_000, loadbalance: 'roundrobin' } }],
    }),
  ],
  controllers: [UsersController],
  providers: [ProfileService],
})
export class ConsumerModule {}
