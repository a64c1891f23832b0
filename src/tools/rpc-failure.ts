/**
 * How a failed call reads on the command line and which exit code it gives: 3 when the registry or the
 * provider could not be reached, 1 for every other failure (the provider's own error, a timeout, a
 * service or method nobody provides).
 */
import type { RpcError } from '../index.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

interface RegistryDetail {
  status?: unknown;
  holdings?: unknown;
}

/**
 * Whether a NoProvider error says that no registry asked could be reached: none is connected, and none
 * could say what it holds (a registry that answered a listing was reached, even if it does not report
 * itself connected yet).
 */
function registriesUnreachable(error: RpcError): boolean {
  const registries = error.details['registries'];
  return (
    Array.isArray(registries) &&
    registries.length > 0 &&
    registries.every(
      (registry: RegistryDetail) => registry?.status !== 'connected' && registry?.holdings === undefined,
    )
  );
}

export function exitCodeOf(error: RpcError): ExitCodeValue {
  if (error.code === 'Network') return ExitCode.Unreachable;
  if (error.code === 'NoProvider' && registriesUnreachable(error)) return ExitCode.Unreachable;
  return ExitCode.Failed;
}

/** `ProviderError RangeError: no user -1`, `Timeout: ...`: the code, the remote error's name, the message. */
export function describeRpcError(error: RpcError): string {
  const own =
    error.remoteName !== undefined && error.remoteName !== error.code && error.remoteName !== 'RpcError';
  const name = own ? ` ${error.remoteName}` : '';
  return `${error.code}${name}: ${error.message.replace(/\s*\n\s*/g, ' ')}`;
}

/** The error as `--json` output carries it. */
export function rpcErrorData(error: RpcError): Record<string, unknown> {
  return {
    code: error.code,
    ...(error.remoteName === undefined ? {} : { name: error.remoteName }),
    message: error.message,
    remote: error.remote,
    ...(Object.keys(error.details).length > 0 ? { details: error.details } : {}),
  };
}
