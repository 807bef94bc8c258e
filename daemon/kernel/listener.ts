// The port to the brain's HTTP listener (daemon/http/listener.ts), for the access capability
// (docs/access.md): where the brain listens, and listening elsewhere without a restart.
import { isIPv4, isIPv6 } from 'node:net';

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
  /**
   * Closes the connections whose requests a proxy on this machine passed on (X-Forwarded-For or
   * Forwarded: the Tailscale Serve tunnel's, when remote access ends), as listen() closes the ones it
   * no longer covers. Returns how many.
   */
  closeForwarded(): number;
}

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.2) is the IPv4 address it maps. */
const unmapped = (address: string): string => (address.toLowerCase().startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address);

/** Whether a connection with this local address reaches one of the bound hosts. */
export function covered(bound: readonly ListenAddress[], localAddress: string | undefined): boolean {
  if (!localAddress) return false;
  const local = unmapped(localAddress);
  const dual = bound.some((b) => b.host === '0.0.0.0') && bound.some((b) => b.host === '::');
  return bound.some((b) => {
    if (b.host === '0.0.0.0') return isIPv4(local);
    if (b.host === '::') return dual ? isIPv6(local) : true;
    return unmapped(b.host) === local || (isIPv6(b.host) && isIPv6(local) && expand(b.host) === expand(local));
  });
}

/** The canonical spelling of an IPv6 address (WHATWG URL serialisation), so ::1 and 0:0:0:0:0:0:0:1 compare equal. */
const expand = (address: string): string => new URL(`http://[${address}]/`).hostname;
