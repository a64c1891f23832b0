import { NestFactory } from '@nestjs/core';
import { ConsumerModule } from './consumer.module';
import { ProfileService } from './profile.service';

// One call without the HTTP server, then app.close(): the process ends by itself, nothing left open.
async function main() {
  const app = await NestFactory.createApplicationContext(ConsumerModule, { logger: ['error', 'warn'] });
  const profile = await app.get(ProfileService).profile(Number(process.argv[2] ?? 7));
  console.log(`profile: ${JSON.stringify(profile)}`);
  await app.close();
  console.log('consumer closed');
}
void main();
