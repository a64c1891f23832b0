/**
 * Compiles `.proto` files with compilers nobody here wrote: Debian's `protoc` (/usr/bin/protoc, 3.21)
 * and Python's `grpc_tools.protoc` (under /usr/bin/python3: the pyenv python on PATH lacks grpc; its
 * bundled protoc is 3.5). Both generate Python (and grpc_tools the gRPC stubs), so a file that compiles
 * is one other languages generate clients from. Debian ships no well-known types' .proto files without
 * libprotobuf-dev: the copy inside grpc_tools is on the include path.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PROTOC = '/usr/bin/protoc';
export const PYTHON = '/usr/bin/python3';

/** The directory of google/protobuf/*.proto (grpc_tools' copy). */
export async function wellKnownIncludes(): Promise<string> {
  const { stdout } = await run(PYTHON, [
    '-c',
    'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))',
  ]);
  return stdout.trim();
}

export interface Compiled {
  readonly code: number;
  readonly stderr: string;
  readonly files: readonly string[];
}

async function compile(command: string, args: string[], out: string): Promise<Compiled> {
  try {
    const { stderr } = await run(command, args, { timeout: 60_000 });
    return { code: 0, stderr, files: readdirSync(out).sort() };
  } catch (error) {
    const failure = error as { code?: number; stderr?: string };
    return { code: failure.code ?? 1, stderr: failure.stderr ?? String(error), files: [] };
  }
}

/** `protoc -I<dir> -I<well-known> --python_out=<out> <file>` (Debian's). */
export async function debianProtoc(dir: string, file: string, out: string): Promise<Compiled> {
  const includes = await wellKnownIncludes();
  return compile(PROTOC, [`-I${dir}`, `-I${includes}`, `--python_out=${out}`, file], out);
}

/** `python3 -m grpc_tools.protoc -I<dir> --python_out --grpc_python_out <file>`. */
export async function grpcToolsProtoc(dir: string, file: string, out: string): Promise<Compiled> {
  return compile(
    PYTHON,
    ['-m', 'grpc_tools.protoc', `-I${dir}`, `--python_out=${out}`, `--grpc_python_out=${out}`, file],
    out,
  );
}

/** Runs a Python script with `path` on sys.path; its stdout. */
export async function python(path: string, script: string, input: string[]): Promise<string> {
  const { stdout } = await run(
    PYTHON,
    ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(path)})\n${script}`, ...input],
    {
      timeout: 60_000,
    },
  );
  return stdout;
}
