/**
 * Context across hops within one app (docs/cluster.md): a method calling another service of the same
 * app in-process (`injvm`) after an `await` passes on the deadline, the tag and the trace as over TCP;
 * and a line the method logs through `app.logger` names the call it serves (its `callId` and
 * `traceId`), after the await too — the app refers a service, so its methods run in an async call
 * context.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callContext, defineService, type LogFields, type Logger, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

interface Front {
  enter(): Promise<{ remainingMs: number; attachments: Record<string, string> }>;
}
interface Back {
  look(): Promise<{ remainingMs: number; attachments: Record<string, string> }>;
}
const FrontDef = defineService<Front>('hops.Front', { methods: { enter: { idempotent: true } } });
const BackDef = defineService<Back>('hops.Back', { methods: { look: { idempotent: true } } });

afterEach(closeAll);

describe('context across hops, in-process', () => {
  it('passes deadline, tag and trace to an in-process call after an await, and names the call in log lines', async () => {
    const lines: Array<{ message: string; fields: LogFields | undefined }> = [];
    const write = (message: string, fields?: LogFields) => lines.push({ message, fields });
    const logger: Logger = { debug: write, info: write, warn: write, error: write };
    const app = await testApp({ logger });
    app.provide(BackDef, {
      async look() {
        const context = callContext()!;
        return { remainingMs: context.deadline - Date.now(), attachments: { ...context.attachments } };
      },
    });
    const back = app.refer(BackDef);
    app.provide(FrontDef, {
      async enter() {
        await new Promise((resolve) => setTimeout(resolve, 1));
        app.logger.info('front: after an await');
        return back.look();
      },
    });
    await app.start();
    const front = app.refer(FrontDef);
    const answer = await withOptions(front, {
      timeoutMs: 400,
      attachments: { 'callisto-tag': 'blue' },
    }).enter();
    expect(answer.remainingMs).toBeGreaterThan(0);
    expect(answer.remainingMs).toBeLessThanOrEqual(395);
    expect(answer.attachments['callisto-tag']).toBe('blue');
    expect(answer.attachments.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const line = lines.find((entry) => entry.message === 'front: after an await');
    expect(line?.fields?.callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
    // the trace id the nested call carried is the one of the served call's log line
    expect(answer.attachments.traceparent!.slice(3, 35)).toBe(line?.fields?.traceId);
  });
});
