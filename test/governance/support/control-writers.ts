/**
 * Writer processes (fixtures/control-writer.ts), each with its own registry control, driven over IPC:
 * what two operators running `callisto disable` at the same moment are. `stop()` closes them and
 * SIGKILLs any that does not exit; an agent also exits when the test process goes away.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/control-writer.ts');

export interface ControlWriter {
  request<T = unknown>(op: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export async function startControlWriter(name: string): Promise<ControlWriter> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', WRITER], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.value);
    else waiter?.reject(new Error(`writer ${name}: ${message.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`writer ${name} exited (code ${code}, signal ${signal}):\n${stderr}`));
    }
    pending.clear();
  });
  await new Promise<unknown>((resolve, reject) => pending.set(0, { resolve, reject }));
  const writer: ControlWriter = {
    request: <T>(op: string, args: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: (value) => resolve(value as T), reject });
        child.send({ id, op, args });
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await writer.request('close').catch(() => {});
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.disconnect();
        await exited;
        clearTimeout(killer);
      }
    },
  };
  return writer;
}
