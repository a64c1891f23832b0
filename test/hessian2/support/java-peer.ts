/**
 * Caucho's Hessian on the JDK, as a peer for the hessian2 tests: fixtures/HessianPeer.java compiled
 * with javac into a temporary directory (once per test file), run as one `java` process spoken to a line
 * at a time. `javaPeerMissing()` says why it cannot run (no javac/java, no hessian.jar), so a test file
 * can skip with that reason; scripts/services/install.sh installs both.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const HESSIAN_JAR = process.env.CALLISTO_HESSIAN_JAR ?? '/usr/share/java/hessian.jar';
const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/HessianPeer.java');
const COMPILE_TIMEOUT_MS = 120_000;
const ANSWER_TIMEOUT_MS = 20_000;

/** Why the Java peer cannot run here, or undefined when it can. */
export function javaPeerMissing(): string | undefined {
  for (const tool of ['javac', 'java']) {
    try {
      execFileSync(tool, ['-version'], { stdio: 'ignore', timeout: 30_000 });
    } catch {
      return `${tool} is not installed (apt-get install default-jdk-headless; scripts/services/install.sh does)`;
    }
  }
  if (!existsSync(HESSIAN_JAR)) {
    return `${HESSIAN_JAR} is missing (apt-get install libhessian-java; scripts/services/install.sh does)`;
  }
  return undefined;
}

export interface JavaAnswer {
  /** The value as Java sees it, every Java type named (HessianPeer.describe). */
  readonly description: string;
  /** The value re-encoded by Java's Hessian2Output. */
  readonly bytes: Buffer;
}

export interface JavaPeer {
  /** Java decodes `bytes`, describes what it got, and encodes it again. */
  roundTrip(bytes: Uint8Array): Promise<JavaAnswer>;
  /** A value Java builds (HessianPeer.sample), described and encoded. */
  make(sample: string): Promise<JavaAnswer>;
  close(): Promise<void>;
}

/** Compiles HessianPeer.java and starts it. */
export function startJavaPeer(): JavaPeer {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-hessian-'));
  execFileSync('javac', ['-encoding', 'UTF-8', '-cp', HESSIAN_JAR, '-d', dir, SOURCE], {
    timeout: COMPILE_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Hessian 4's serializers reflect into java.base (as Dubbo 2 needs on a JDK past 8)
  const opens = ['java.lang', 'java.util', 'java.math', 'java.io'].flatMap((pkg) => [
    '--add-opens',
    `java.base/${pkg}=ALL-UNNAMED`,
  ]);
  const classpath = `${dir}${path.delimiter}${HESSIAN_JAR}`;
  const child: ChildProcess = spawn('java', [...opens, '-cp', classpath, 'com.example.HessianPeer'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const waiting = new Map<
    number,
    { resolve: (answer: JavaAnswer) => void; reject: (error: Error) => void }
  >();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const [id, status, ...rest] = line.split(' ');
    const waiter = waiting.get(Number(id));
    if (waiter === undefined) return;
    waiting.delete(Number(id));
    const text = rest.join(' ');
    if (status !== 'OK') {
      waiter.reject(new Error(`Java: ${text}`));
      return;
    }
    const tab = text.lastIndexOf('\t');
    waiter.resolve({ description: text.slice(0, tab), bytes: Buffer.from(text.slice(tab + 1), 'hex') });
  });
  child.once('exit', (code, signal) => {
    for (const waiter of waiting.values()) {
      waiter.reject(new Error(`the Java peer exited (code ${code}, signal ${signal}): ${stderr}`));
    }
    waiting.clear();
  });
  child.stdin!.on('error', () => {});
  let next = 0;
  const ask = (op: string, arg: string): Promise<JavaAnswer> =>
    new Promise<JavaAnswer>((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the Java peer did not answer "${op}" in ${ANSWER_TIMEOUT_MS} ms: ${stderr}`));
      }, ANSWER_TIMEOUT_MS);
      waiting.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.stdin!.write(`${id} ${op} ${arg}\n`);
    });
  return {
    roundTrip: (bytes) => ask('rt', Buffer.from(bytes).toString('hex')),
    make: (sample) => ask('make', sample),
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.stdin!.end();
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Java's String.hashCode, for long strings HessianPeer describes by length and hash. */
export function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/** Java's Arrays.hashCode(byte[]), for binaries HessianPeer describes by hash. */
export function javaBytesHash(bytes: Uint8Array): number {
  let hash = 1;
  for (const byte of bytes) hash = (Math.imul(hash, 31) + ((byte << 24) >> 24)) | 0;
  return hash;
}
