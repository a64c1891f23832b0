import { Injectable } from '@nestjs/common';

/** A plain Nest service: the RPC service below gets it through Nest's dependency injection. */
@Injectable()
export class GreetingService {
  phrase(name: string): string {
    return `Hello, ${name}! (from the provider's GreetingService)`;
  }
}
