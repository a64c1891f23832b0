/**
 * Where a command writes: results on stdout, errors and progress on stderr. Colours only when the
 * stream is a terminal and `NO_COLOR` is not set (https://no-color.org), never in `--json` output.
 */
import { styleText } from 'node:util';

/** The streams and environment a command runs with (process's in `main.ts`, others in tests). */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

export interface Output {
  /** Whether `--json` was given: stdout carries one JSON document, nothing else. */
  readonly json: boolean;
  /** Whether stderr is a terminal (progress bars go there). */
  readonly interactive: boolean;
  /** A line on stdout. */
  line(text?: string): void;
  /** One JSON document on stdout. */
  document(value: unknown): void;
  /** `warning: …` on stderr. */
  warn(text: string): void;
  /** Anything else on stderr (progress, timings). */
  note(text: string): void;
  /** `text` styled for stdout (plain when stdout gets no colours). */
  style(style: Style, text: string): string;
  /** `text` styled for stderr. */
  styleErr(style: Style, text: string): string;
  readonly io: CliIo;
}

/** Whether a stream should get colours: a terminal, NO_COLOR unset or empty, TERM not `dumb`. */
export function colorsFor(stream: { isTTY?: boolean }, env: CliIo['env']): boolean {
  if (stream.isTTY !== true) return false;
  if ((env['NO_COLOR'] ?? '') !== '') return false;
  return env['TERM'] !== 'dumb';
}

export function createOutput(io: CliIo, options: { json: boolean }): Output {
  const outColors = !options.json && colorsFor(io.stdout, io.env);
  const errColors = colorsFor(io.stderr, io.env);
  // colorsFor() decides, per stream (styleText would judge stderr's text by stdout)
  const paint = (enabled: boolean, style: Style, text: string) =>
    enabled ? styleText(style, text, { validateStream: false }) : text;
  return {
    json: options.json,
    interactive: io.stderr.isTTY === true,
    line(text = '') {
      io.stdout.write(`${text}\n`);
    },
    document(value) {
      io.stdout.write(`${JSON.stringify(value)}\n`);
    },
    warn(text) {
      io.stderr.write(`${paint(errColors, 'yellow', 'warning:')} ${text}\n`);
    },
    note(text) {
      io.stderr.write(`${text}\n`);
    },
    style: (style, text) => paint(outColors, style, text),
    styleErr: (style, text) => paint(errColors, style, text),
    io,
  };
}
