/** The load report a provider's pong carries (docs/protocol.md, "Load reports"), from its metadata. */
import { LOAD_ATTACHMENT } from '../loadbalance/load-report.js';
import { readAttachments } from '../protocol/metadata.js';

/** The `callisto-load` value in a pong's metadata (an attachment block), or undefined. */
export function pongLoad(meta: Buffer): string | undefined {
  try {
    return readAttachments(meta, 0).attachments[LOAD_ATTACHMENT];
  } catch {
    return undefined;
  }
}
