/**
 * What `call` and `bench` are told on the command line: `<service>.<method>`, the arguments (one JSON
 * value each, with the tags of json-view.ts), attachments (`k=v`). Every mistake is a usage error that
 * names the part of the command line at fault.
 */
import { usageError } from './exit-codes.js';
import { fromView, ViewError } from './json-view.js';

export interface CallTarget {
  /** The service name, e.g. `example.UserService`. */
  readonly service: string;
  readonly method: string;
}

const SERVICE_NAME = /^[A-Za-z_$][\w$.-]*$/;
const METHOD_NAME = /^[A-Za-z_$][\w$]*$/;

/** `example.UserService.getUser` -> service `example.UserService`, method `getUser` (split at the last dot). */
export function parseCallTarget(text: string): CallTarget {
  const dot = text.lastIndexOf('.');
  const service = text.slice(0, dot);
  const method = text.slice(dot + 1);
  if (dot <= 0 || !SERVICE_NAME.test(service) || !METHOD_NAME.test(method)) {
    throw usageError(
      `"${text}" is not <service>.<method> (e.g. example.UserService.getUser): a service name of letters, digits, '.', '_', '-' or '$', a dot, and a method name`,
    );
  }
  return { service, method };
}

/** Shortened for messages. */
const quote = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** Each command-line argument as one value; a malformed one is a usage error naming it. */
export function parseCallArguments(texts: readonly string[]): unknown[] {
  return texts.map((text, i) => {
    const which = `argument ${i + 1} (${quote(text)})`;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      const hint = /^[A-Za-z_][\w\s-]*$/.test(text.trim())
        ? `; a string needs JSON quotes: '"${text.trim()}"'`
        : '';
      throw usageError(`${which} is not valid JSON: ${(error as Error).message}${hint}`);
    }
    try {
      return fromView(data);
    } catch (error) {
      if (error instanceof ViewError) throw usageError(`${which}: ${error.message}`);
      throw error;
    }
  });
}

/** `--attachment k=v` (repeatable) as attachments; the first `=` splits. */
export function parseAttachments(pairs: readonly string[]): Record<string, string> {
  const attachments: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError(`--attachment ${quote(pair)} is not key=value`);
    Object.defineProperty(attachments, pair.slice(0, at), {
      value: pair.slice(at + 1),
      enumerable: true,
      writable: true,
    });
  }
  return attachments;
}
