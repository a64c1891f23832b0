/**
 * `registry-token` (provider, `server.auth.registryToken`): every call from another process must carry
 * the token this provider published with its registry records (attachment `callisto-registry-token`,
 * sent by consumers that found it through a registry), or it is refused with `Unauthorized` before its
 * arguments are decoded. The attachment is taken out: filters after it and the handler never see it.
 * In-process calls of the app's own consumers need none.
 */
import { timingSafeEqual } from 'node:crypto';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { REGISTRY_TOKEN_ATTACHMENT } from '../core/registry-token.js';
import { RpcError } from '../core/rpc-error.js';

export function registryTokenFilter(token: string): NamedFilter {
  const expected = Buffer.from(token);
  return defineFilter({
    name: 'registry-token',
    position: 'provider',
    order: FILTER_ORDER.provider['registry-token'],
    start(invocation) {
      const sent = invocation.attachments[REGISTRY_TOKEN_ATTACHMENT];
      if (sent !== undefined) delete invocation.attachments[REGISTRY_TOKEN_ATTACHMENT];
      if (invocation.remoteAddress === 'injvm') return;
      const given = Buffer.from(typeof sent === 'string' ? sent : '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new RpcError(
          'Unauthorized',
          `${invocation.service.name}.${invocation.method}: no valid registry token (server.auth.registryToken: call this provider through its registry)`,
        );
      }
    },
  });
}
