import { RpcError } from '../core/rpc-error.js';
import type { ArgumentsSchema, StandardResult } from './service-types.js';

/** Validates an argument list; resolves to the (possibly transformed) arguments or throws BadRequest. */
export function createArgumentsValidator(
  label: string,
  schema: ArgumentsSchema,
): (args: unknown[]) => unknown[] | Promise<unknown[]> {
  const fail = (detail: string): never => {
    throw new RpcError('BadRequest', `invalid arguments for ${label}: ${detail}`);
  };
  const checkArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
  if ('~standard' in schema) {
    const fromResult = (result: StandardResult): unknown[] => {
      if (result.issues) {
        return fail(
          result.issues
            .map(
              (issue) => (issue.path?.length ? `${issue.path.map(pathKey).join('.')}: ` : '') + issue.message,
            )
            .join('; '),
        );
      }
      return checkArray(result.value);
    };
    return (args) => {
      const result = schema['~standard'].validate(args);
      return result instanceof Promise ? result.then(fromResult) : fromResult(result);
    };
  }
  return (args) => {
    const result = schema.safeParse(args);
    if (!result.success) return fail(String((result.error as Error | undefined)?.message ?? 'rejected'));
    return checkArray(result.data);
  };
}

function pathKey(segment: unknown): string {
  if (typeof segment === 'object' && segment !== null && 'key' in segment) return String(segment.key);
  return String(segment);
}
