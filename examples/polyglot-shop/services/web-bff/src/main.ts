import { NestFactory } from '@nestjs/core';
import { MicroserviceOptions, Transport } from '@nestjs/microservices';
import { AppModule } from './app.module';

// The web BFF: one HTTP endpoint per page of the web shop, plus a Kafka listener.
async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.connectMicroservice<MicroserviceOptions>({
    transport: Transport.KAFKA,
    options: {
      client: { clientId: 'web-bff', brokers: [process.env.KAFKA_BROKERS ?? 'kafka:9092'] },
      consumer: { groupId: 'web-bff' },
    },
  });
  await app.startAllMicroservices();
  await app.listen(Number(process.env.PORT ?? 3001));
}

void bootstrap();
