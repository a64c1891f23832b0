/**
 * The child side of a test agent driven over IPC (multi-host and scale agents): each request
 * `{ id, op, args }` is handled and answered `{ id, ok, value | error }`; `ready` is sent once as id 0,
 * and the agent exits when its parent goes away.
 */
export interface AgentRequest {
  id: number;
  op: string;
  args?: Record<string, unknown>;
}

export function serveAgentRequests(handle: (request: AgentRequest) => Promise<unknown>): void {
  process.on('message', (message: AgentRequest) => {
    handle(message).then(
      (value) => process.send?.({ id: message.id, ok: true, value }),
      (error: unknown) =>
        process.send?.({
          id: message.id,
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ id: 0, ok: true, value: 'ready' });
}
