/**
 * What a call came to, as one word a test can compare: 'answered', or the RpcError's code (any other
 * error as its text).
 */
import { RpcError } from '../../src/index.js';

export async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'answered';
  } catch (error) {
    return RpcError.is(error) ? error.code : String(error);
  }
}
