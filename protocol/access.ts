// /api/access (spec 4.7, issue 13): who can reach the brain. The spec shows no shapes; these are svc's
// own (docs/access.md). `localhost` listens on loopback only, `lan` on every interface, `remote` adds a
// private-network tunnel (Tailscale Serve) on top of either, which remote-down takes away again.
import { Type, type Static } from '@sinclair/typebox';

export const AccessModeName = Type.Union([Type.Literal('localhost'), Type.Literal('lan'), Type.Literal('remote')]);
export type AccessModeName = Static<typeof AccessModeName>;

/** What the listener does under any tunnel: the mode `svc access remote-down` returns to. */
export const ListenerMode = Type.Union([Type.Literal('localhost'), Type.Literal('lan')]);
export type ListenerMode = Static<typeof ListenerMode>;

export const TunnelState = Type.Union([Type.Literal('off'), Type.Literal('starting'), Type.Literal('up'), Type.Literal('error')], {
  description: 'off: no tunnel; starting: remote mode was kept from the last run and the tunnel is being brought up; up: serving; error: remote mode is wanted and the tunnel failed (see error and fix)',
});
export type TunnelState = Static<typeof TunnelState>;

export const Tunnel = Type.Object({
  provider: Type.Literal('tailscale'),
  state: TunnelState,
  url: Type.Union([Type.String(), Type.Null()], { description: 'The tunnel base URL (https://<machine>.<tailnet>.ts.net) while up' }),
  error: Type.Union([Type.String(), Type.Null()]),
  fix: Type.Union([Type.String(), Type.Null()], { description: 'What to do about the error, as a command or a step' }),
});
export type Tunnel = Static<typeof Tunnel>;

export const ListeningAddress = Type.Object({
  host: Type.String(),
  family: Type.Union([Type.Literal('IPv4'), Type.Literal('IPv6')]),
  port: Type.Integer(),
});

export const AccessStatus = Type.Object({
  mode: AccessModeName,
  listener: ListenerMode,
  pinned_host: Type.Union([Type.String(), Type.Null()], { description: 'Set when server.host, SVC_HOST or --host fixes the listen address; svc access lan|localhost are refused then' }),
  listening: Type.Array(ListeningAddress),
  urls: Type.Array(Type.String(), { description: 'Base URLs another device can use (none in localhost mode without a tunnel)' }),
  tunnel: Tunnel,
});
export type AccessStatus = Static<typeof AccessStatus>;

/** Why a tunnel could not be brought up or down (details.reason of the 409). */
export const TUNNEL_FAILURES = ['cli_missing', 'daemon_not_running', 'logged_out', 'permission_denied', 'serve_not_enabled', 'failed'] as const;
export type TunnelFailure = (typeof TUNNEL_FAILURES)[number];
