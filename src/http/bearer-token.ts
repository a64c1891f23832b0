/**
 * The bearer token check of a listener that has one token (`admin.token`, the dashboard's `--token`):
 * `Authorization: Bearer <token>` (the scheme in any case), compared in constant time — both sides
 * hashed to the same length first, so that not even the token's length shows in the time taken.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

const BEARER = /^Bearer\s+(\S(?:.*\S)?)\s*$/i;

/** Whether a request carries `token`; every request does when `token` is undefined. */
export function createBearerCheck(token: string | undefined): (request: IncomingMessage) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (request) => {
    const match = BEARER.exec(request.headers.authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]!), expected);
  };
}
