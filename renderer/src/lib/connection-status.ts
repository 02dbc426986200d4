/**
 * The push connection's health as the bridge reports it (kept apart from bridge.ts so the store
 * can name it without depending on the DOM transport).
 */
export type ConnectionStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'open'; transport: 'websocket' | 'electron' }
  /** `refused`: the server answered that this page may not connect (its session token), and why. */
  | { state: 'closed'; attempt: number; retryInMs: number; reason: string; refused?: string };
