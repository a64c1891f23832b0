import { NestFactory } from '@nestjs/core';
import type { CallistoApp } from 'callisto';
import { CALLISTO_APP } from 'callisto/nestjs';
import { ProviderModule } from './provider.module';

async function bootstrap() {
  // No HTTP server: a standalone application whose only entry point is Callisto's.
  const app = await NestFactory.createApplicationContext(ProviderModule);
  // SIGTERM / SIGINT -> app.close(): Callisto unregisters, tells consumers, drains, closes.
  app.enableShutdownHooks();
  console.log(`provider serving on ${app.get<CallistoApp>(CALLISTO_APP).address}; Ctrl-C stops it`);
}
void bootstrap();
