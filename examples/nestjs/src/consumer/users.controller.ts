import { Controller, Get, Param, ParseIntPipe } from '@nestjs/common';
import { ProfileService } from './profile.service';

@Controller('users')
export class UsersController {
  constructor(private readonly profiles: ProfileService) {}

  @Get(':id')
  profile(@Param('id', ParseIntPipe) id: number) {
    return this.profiles.profile(id);
  }
}
