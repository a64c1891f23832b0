/**
 * Streaming calls in one runnable file: a provider and a consumer app in one process over a real TCP
 * connection, with a server stream (price ticks), a client stream (an upload in chunks answered once)
 * and a two-way stream (a chat), a `break` that cancels a stream on both sides, and an error mid-stream.
 *
 *   npx tsx examples/streaming/run.ts
 */
import { callContext, callisto, defineService, RpcError } from '../../src/index.js';

interface Tick {
  symbol: string;
  price: number;
}
interface Chunk {
  bytes: string;
}
interface Msg {
  text: string;
}

interface Market {
  watch(symbol: string): AsyncIterable<Tick>;
  upload(name: string, chunks: AsyncIterable<Chunk>): Promise<{ name: string; bytes: number }>;
  chat(messages: AsyncIterable<Msg>): AsyncIterable<Msg>;
  limited(count: number): AsyncIterable<number>;
}

const MarketDef = defineService<Market>('example.Market', {
  methods: {
    watch: { stream: 'server' },
    upload: { stream: 'client' },
    chat: { stream: 'bidi' },
    limited: { stream: 'server' },
  },
});

const provider = await callisto({
  application: 'market',
  logLevel: 'silent',
  load: { configFile: false, env: false },
});
provider.provide(MarketDef, {
  async *watch(symbol) {
    const signal = callContext()?.signal;
    try {
      for (let n = 0; ; n++) yield { symbol, price: 100 + n };
    } finally {
      // runs when the consumer breaks out of its loop (its cancel reached the provider)
      console.log(`provider: watch(${symbol}) ended, signal aborted: ${signal?.aborted}`);
    }
  },
  async upload(name, chunks) {
    let bytes = 0;
    for await (const chunk of chunks) bytes += chunk.bytes.length;
    return { name, bytes };
  },
  async *chat(messages) {
    for await (const message of messages) yield { text: `echo: ${message.text}` };
    yield { text: 'bye' }; // after the consumer's input ended (half-close)
  },
  async *limited(count) {
    for (let n = 0; n < count; n++) yield n;
    throw new RangeError(`only ${count} today`);
  },
});
await provider.start();

const consumer = await callisto({
  application: 'web',
  logLevel: 'silent',
  load: { configFile: false, env: false },
});
const market = consumer.refer(MarketDef, { url: provider.address! });

const prices: number[] = [];
for await (const tick of market.watch('ACME')) {
  prices.push(tick.price);
  if (prices.length === 3) break; // cancels the stream on both sides
}
console.log(`watch(ACME) -> ${prices.join(', ')}`);

async function* chunks() {
  for (const bytes of ['hello ', 'streaming ', 'world']) yield { bytes };
}
const uploaded = await market.upload('greeting.txt', chunks());
console.log(`upload -> ${uploaded.name}, ${uploaded.bytes} bytes`);

async function* said() {
  yield { text: 'hi' };
  yield { text: 'how are you?' };
}
for await (const message of market.chat(said())) console.log(`chat -> ${message.text}`);

const got: number[] = [];
try {
  for await (const n of market.limited(2)) got.push(n);
} catch (error) {
  if (RpcError.is(error))
    console.log(`limited(2) -> ${got.join(', ')} then ${error.code} ${error.remoteName}: ${error.message}`);
}

await consumer.close();
await provider.close();
console.log('closed');
