// The port to the brain's HTTP listener (daemon/http/listener.ts), for the access capability
// (docs/access.md): where the brain listens, and listening elsewhere without a restart.

/** One bound address: `host` as bound (`127.0.0.1`, `::1`, `0.0.0.0`, `::`, or a specific address). */
export interface ListenAddress {
  readonly host: string;
  readonly family: 'IPv4' | 'IPv6';
  readonly port: number;
}

export interface ListenerPort {
  /**
   * The listen address fixed by `server.host`, `SVC_HOST` or `--host` (any value but the default
   * 127.0.0.1), or null when the access mode chooses where the brain listens.
   */
  readonly pinnedHost: string | null;
  /** Where the brain listens now; empty until the http part has started. */
  addresses(): ListenAddress[];
  /**
   * Listens on `hosts` (same port) instead of the current ones; before the http part has started it
   * only sets where the brain will listen. Resolves once bound. Open connections (HTTP and WebSocket)
   * whose local address the new hosts do not cover are closed; the others are kept. On failure the
   * previous hosts are bound again and the error is thrown.
   */
  listen(hosts: readonly string[]): Promise<ListenAddress[]>;
  /** Called after every bind: when the http part starts and after each listen(). */
  onListening(handler: (addresses: ListenAddress[]) => void): void;
}
