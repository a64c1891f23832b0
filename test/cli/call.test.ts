/**
 * `callisto call`, the built binary in a child process, against a real provider process on the file
 * registry (and directly by --url): results with their types, errors with their code, bad input as one
 * line and exit code 2, unreachable targets as exit code 3, never a stack trace.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  type CliBuild,
  type CliResult,
  closedPort,
  expectOneLineError,
  hasAnsi,
  jsonOf,
  type ProviderProcess,
  runCli,
  show,
  startProvider,
} from './support/cli.js';

let cli: CliBuild;
let provider: ProviderProcess;
let dir: string;
let registry: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-call-'));
  registry = `file://${dir}`;
  [cli, provider] = await Promise.all([buildCli(), startProvider({ registry, application: 'users' })]);
}, 120_000);

afterAll(async () => {
  await provider?.stop();
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (args: string[], env?: Record<string, string>): Promise<CliResult> =>
  runCli(cli, ['call', ...args], { env });

describe('callisto call', () => {
  it('prints the result as JSON, with what JSON cannot say as tags', async () => {
    const result = await call(['cli.UserService.getUser', '7', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).toBe('');
    expect(hasAnsi(result.stdout + result.stderr)).toBe(false); // no colours through a pipe
    expect(JSON.parse(result.stdout)).toEqual({
      id: 7,
      name: 'user-7',
      joinedAt: { $t: 'D', v: Date.parse('2024-05-01T12:00:00.000Z') },
      tags: { $t: 'S', v: ['a', 'b'] },
      balance: { $t: 'n', v: '12345678901234567890' },
      meta: { $t: 'M', v: ['visits', 3, 7, 'seven'] },
      photo: { $t: 'B', v: Buffer.from('hi').toString('base64') },
      nothing: { $t: 'u' },
      ratio: { $t: 'f', v: 'NaN' },
    });
  });

  for (const serializer of ['msgpack', 'json', 'v8']) {
    it(`gives arguments with the same tags, and they arrive typed (--serializer ${serializer})`, async () => {
      const result = await call([
        'cli.UserService.echo',
        '{"$t":"D","v":"2024-01-02T03:04:05.000Z"}',
        '{"$t":"n","v":"-42"}',
        '{"$t":"M","v":["k",{"$t":"S","v":[1,2]}]}',
        '"text"',
        '{"$t":"o","v":{"$t":"not a tag"}}',
        '--registry',
        registry,
        '--serializer',
        serializer,
      ]);
      expect(result.code, show(result)).toBe(0);
      const echoed = JSON.parse(result.stdout) as Array<{ type: string; value: unknown }>;
      expect(echoed.map((e) => e.type)).toEqual(['Date', 'BigInt', 'Map', 'String', 'Object']);
      expect(echoed.map((e) => e.value)).toEqual([
        { $t: 'D', v: Date.parse('2024-01-02T03:04:05.000Z') },
        { $t: 'n', v: '-42' },
        { $t: 'M', v: ['k', { $t: 'S', v: [1, 2] }] },
        'text',
        { $t: 'o', v: { $t: 'not a tag' } },
      ]);
    });
  }

  it('prints {"$t":"u"} for a void method', async () => {
    const result = await call(['cli.UserService.nothing', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ $t: 'u' });
  });

  it("calls a service's $echo: the value comes back through the provider's filters", async () => {
    const result = await call(['cli.UserService.$echo', '"are you there"', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toBe('are you there');
    const unknown = await call(['cli.Nobody.$echo', '--url', provider.address, '--timeout', '2000']);
    expect(unknown.code, show(unknown)).toBe(1);
  });

  it('sends attachments to a provider given by --url, and --json wraps the result', async () => {
    const result = await call([
      'cli.UserService.attachments',
      '--url',
      provider.address,
      '--attachment',
      'traceId=abc',
      '--attachment',
      'expr=a=b',
      '--json',
    ]);
    expect(result.code, show(result)).toBe(0);
    const document = jsonOf(result);
    expect(document).toMatchObject({
      ok: true,
      service: 'cli.UserService',
      method: 'attachments',
      result: { traceId: 'abc', expr: 'a=b' },
    });
    expect(document['elapsedMs']).toBeTypeOf('number');
  });

  it("prints a provider's error with its code, name, message and details; exit 1", async () => {
    const result = await call(['cli.UserService.withdraw', '500', '--registry', registry]);
    expect(result.code, show(result)).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: ProviderError InsufficientFundsError: balance 100 is below 500\ndetails: {"balance":100,"requested":500}\n',
    );
    const json = await call(['cli.UserService.withdraw', '500', '--registry', registry, '--json']);
    expect(json.code, show(json)).toBe(1);
    expect(json.stderr).toBe('');
    expect(jsonOf(json)).toMatchObject({
      ok: false,
      error: {
        code: 'ProviderError',
        name: 'InsufficientFundsError',
        message: 'balance 100 is below 500',
        remote: true,
        details: { balance: 100, requested: 500 },
      },
    });
    const thrown = await call(['cli.UserService.getUser', '0', '--registry', registry]);
    expectOneLineError(thrown, 1, /^error: ProviderError RangeError: no user 0$/);
  });

  it('a wrong method name: one line, exit 1', async () => {
    const result = await call(['cli.UserService.getUsr', '7', '--registry', registry]);
    expectOneLineError(result, 1, /MethodNotFound: .*cli\.UserService.*"getUsr"/);
  });

  it('an unknown service or version: NoProvider saying what the registry holds, exit 1', async () => {
    const unknown = await call(['cli.Nope.getUser', '7', '--registry', registry]);
    expectOneLineError(unknown, 1, /NoProvider: .*nothing registered for cli\.Nope/);
    const version = await call([
      'cli.UserService.getUser',
      '7',
      '--version',
      '9.9.9',
      '--registry',
      registry,
    ]);
    expectOneLineError(version, 1, /NoProvider: .*registered versions: 1\.0\.0/);
  });

  it('malformed JSON arguments: a usage error naming the argument, exit 2', async () => {
    expectOneLineError(
      await call(['cli.UserService.echo', '1', '{"a":', '--registry', registry]),
      2,
      /^error: argument 2 \("\{\\"a\\":"\) is not valid JSON: /,
    );
    expectOneLineError(
      await call(['cli.UserService.echo', 'Ann', '--registry', registry]),
      2,
      /argument 1 \("Ann"\) is not valid JSON: .*a string needs JSON quotes: '"Ann"'/,
    );
    expectOneLineError(
      await call(['cli.UserService.echo', '{"when":{"$t":"D","v":"yesterday"}}', '--registry', registry]),
      2,
      /argument 1 .*\.when: "D" expects "v": ms since 1970 or an ISO date string/,
    );
    expectOneLineError(
      await call(['cli.UserService.echo', '{"__proto__":{"x":1}}', '--registry', registry]),
      2,
      /argument 1 .*__proto__/,
    );
  });

  it('other command-line mistakes: one line, exit 2, before anything is called', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['getUser', '--registry', registry], /is not <service>\.<method>/],
      [['cli.UserService.', '--registry', registry], /is not <service>\.<method>/],
      [['cli.UserService.getUser'], /say where the providers are: --registry <address> or --url/],
      [['cli.UserService.getUser', '--registry', registry, '--url', provider.address], /not both/],
      [
        ['cli.UserService.getUser', '--regisry', registry],
        /unknown option '--regisry' \(Did you mean --registry\?\)/,
      ],
      [
        ['cli.UserService.getUser', '--timeout', 'soon', '--registry', registry],
        /--timeout <ms>.*'soon' is invalid/,
      ],
      [
        ['cli.UserService.getUser', '--serializer', 'yaml', '--registry', registry],
        /invalid --serializer = "yaml".*msgpack/,
      ],
      [
        ['cli.UserService.getUser', '--registry', 'etcdd://127.0.0.1:2379'],
        /invalid --registry = "etcdd:.*did you mean "etcd:/,
      ],
      [['cli.UserService.getUser', '--url', 'nowhere'], /invalid --url = "nowhere".*host:port/],
      [
        ['cli.UserService.getUser', '--attachment', 'novalue', '--registry', registry],
        /--attachment "novalue" is not key=value/,
      ],
      [['cli.UserService.toString', '--registry', registry], /toString cannot be called remotely/],
    ];
    for (const [args, pattern] of cases) expectOneLineError(await call(args), 2, pattern);
  });

  it('a call that takes longer than --timeout: Timeout, exit 1', async () => {
    const result = await call(['cli.UserService.slow', '10000', '--timeout', '300', '--registry', registry]);
    expectOneLineError(result, 1, /^error: Timeout: /);
    expect(result.ms).toBeLessThan(8_000);
  });

  it('an unreachable provider or registry: one line, exit 3', async () => {
    const port = await closedPort();
    expectOneLineError(
      await call(['cli.UserService.getUser', '7', '--url', `127.0.0.1:${port}`]),
      3,
      /^error: Network: .*ECONNREFUSED/,
    );
    const registryDown = await call(
      ['cli.UserService.getUser', '7', '--registry', `redis://127.0.0.1:${port}`],
      {
        CALLISTO_START_TIMEOUT_MS: '1000',
      },
    );
    expectOneLineError(registryDown, 3, /^error: NoProvider: .*redis:\/\/127\.0\.0\.1:\d+ \(disconnected/);
  });

  it('leaves no consumer entry behind', async () => {
    const result = await call(['cli.UserService.getUser', '1', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    const consumers = path.join(dir, 'callisto', 'cli.UserService:1.0.0', 'consumers');
    expect(readdirSync(consumers).filter((name) => name.endsWith('.json'))).toEqual([]);
  });
});
