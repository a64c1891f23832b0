/**
 * The package built once per test run, for every test that needs the built code (the CLI tests run
 * `dist/cli/main.js`, the package tests install the tarball): the first file to ask runs `npm run build`
 * and `npm pack --ignore-scripts` (the build is already there: no second compile through `prepare`);
 * every other file, in any worker process, waits for that one build. The run's directory comes from the
 * global setup (test/setup/global-setup.ts), which removes it afterwards. A test run that needs no build
 * makes none.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { waitFor } from './wait-for.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** A build takes seconds, more on a loaded machine; npm bounds each step itself. */
const BUILD_TIMEOUT_MS = 240_000;

const run = promisify(execFile);

export interface SharedBuild {
  /** `dist/cli/main.js` of the repository, built from this tree. */
  readonly cliMain: string;
  /** The tarball `npm pack` wrote. */
  readonly tarball: string;
  /** The files in it. */
  readonly files: readonly string[];
}

/** Our environment minus what npm would read from an enclosing `npm test`. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'INIT_CWD'),
  );
}

async function build(dir: string): Promise<SharedBuild> {
  const options = { cwd: REPO, env: npmEnv(), timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 };
  await run('npm', ['run', 'build'], options);
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
    options,
  );
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as [
    { filename: string; files: { path: string }[] },
  ];
  return {
    cliMain: path.join(REPO, 'dist/cli/main.js'),
    tarball: path.join(dir, report.filename),
    files: report.files.map((file) => file.path),
  };
}

let mine: Promise<SharedBuild> | undefined;

/** The run's build: made by the first caller of the run, awaited by the others. */
export function sharedBuild(): Promise<SharedBuild> {
  mine ??= (async () => {
    const dir = inject('suiteDir');
    const result = path.join(dir, 'build.json');
    try {
      fs.mkdirSync(path.join(dir, 'build.lock'));
    } catch {
      // another file builds it: wait for its result
      const text = await waitFor(
        () => (fs.existsSync(result) ? fs.readFileSync(result, 'utf8') : undefined),
        BUILD_TIMEOUT_MS,
        {
          message: 'the shared build did not finish',
          intervalMs: 200,
        },
      );
      const outcome = JSON.parse(text) as { build?: SharedBuild; error?: string };
      if (outcome.build === undefined) throw new Error(`the shared build failed: ${outcome.error}`);
      return outcome.build;
    }
    try {
      const made = await build(dir);
      fs.writeFileSync(`${result}.part`, JSON.stringify({ build: made }));
      fs.renameSync(`${result}.part`, result);
      return made;
    } catch (error) {
      const { message, stdout, stderr } = error as { message: string; stdout?: string; stderr?: string };
      const reason = `${message}\n${stdout ?? ''}${stderr ?? ''}`;
      fs.writeFileSync(`${result}.part`, JSON.stringify({ error: reason }));
      fs.renameSync(`${result}.part`, result);
      throw new Error(`the shared build failed: ${reason}`);
    }
  })();
  return mine;
}
