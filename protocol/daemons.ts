// Delivering installed daemons to the node-agents that run them (issue 16 "Marketplace registry": "A
// daemon is a node-agent driver bundle; installing one delivers it to the node-agents that run it";
// docs/registry.md "Delivering daemons to node-agents", docs/node-agent.md "Daemons"). Delivery is an
// HTTP pull by the node-agent with its node key, so it works whatever the /v1/node socket does:
//   GET  /api/daemons/mine          (node)  the daemon installed for the calling node's id, or null
//   GET  /api/daemons/mine/bundle   (node)  its .tar.gz; sha256 is the one GET /mine gave
//   POST /api/daemons/mine/status   (node)  installed | running | failed, with the reason
//   GET  /api/daemons/delivery      (admin) each installed daemon with what its node last reported
// The node-agent then runs the bundle's entry as a driver in the QuickJS sandbox (node-agent/
// daemon-driver.ts): `describe()` gives a device self-description, `on_action(name, params)` runs an
// action; the manifest's `permissions.network` says which hosts its http_get/http_post may reach.
import { Type, type Static } from '@sinclair/typebox';
import { SEMVER_PATTERN, SkillNetworkPermission } from './skills';

export const DAEMONS_MINE_PATH = '/api/daemons/mine';
export const DAEMONS_BUNDLE_PATH = '/api/daemons/mine/bundle';
export const DAEMONS_STATUS_PATH = '/api/daemons/mine/status';
export const DAEMONS_DELIVERY_PATH = '/api/daemons/delivery';

/** The daemon a node is to hold: what it checks the bundle against and where the driver starts. */
export const DaemonOffer = Type.Object(
  {
    node_id: Type.String(),
    version: Type.String(),
    /** The entry file inside the bundle (the manifest's `entry`). */
    entry: Type.String(),
    display_name: Type.String(),
    /** sha256 (hex) of the bytes GET /api/daemons/mine/bundle sends. */
    sha256: Type.String(),
    /** Their length in bytes. */
    size: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type DaemonOffer = Static<typeof DaemonOffer>;

/** GET /api/daemons/mine: null when no daemon is installed for this node (a normal state, not an error). */
export const MyDaemon = Type.Object({ daemon: Type.Union([DaemonOffer, Type.Null()]) }, { additionalProperties: false });
export type MyDaemon = Static<typeof MyDaemon>;

export const DELIVERY_STATES = ['installed', 'running', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** POST /api/daemons/mine/status: what the node did with `version`. */
export const DaemonStatusBody = Type.Object(
  {
    version: Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 }),
    state: Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s))),
    /** Why, when failed (cut to 2000 characters by the node-agent). */
    error: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type DaemonStatusBody = Static<typeof DaemonStatusBody>;

/** A node's last report, as recorded. */
export const DaemonReport = Type.Object(
  {
    node_id: Type.String(),
    version: Type.String(),
    state: Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s))),
    error: Type.Union([Type.String(), Type.Null()]),
    reported_at: Type.String(),
  },
  { additionalProperties: false },
);
export type DaemonReport = Static<typeof DaemonReport>;

/**
 * One installed daemon as the admin sees its delivery: `state` is the node's report about the
 * installed version, or `pending` while the node has reported nothing about it yet (an older version's
 * report stays visible in `last_report`).
 */
export const DaemonDelivery = Type.Object(
  {
    node_id: Type.String(),
    version: Type.String(),
    state: Type.Union([Type.Literal('pending'), ...DELIVERY_STATES.map((s) => Type.Literal(s))]),
    error: Type.Union([Type.String(), Type.Null()]),
    last_report: Type.Union([DaemonReport, Type.Null()]),
  },
  { additionalProperties: false },
);
export type DaemonDelivery = Static<typeof DaemonDelivery>;

export const DaemonDeliveryList = Type.Object({ deliveries: Type.Array(DaemonDelivery) }, { additionalProperties: false });
export type DaemonDeliveryList = Static<typeof DaemonDeliveryList>;

/** What the node-agent reads of a delivered daemon's manifest.json besides DaemonManifest: its network permission. */
export const DaemonDriverManifest = Type.Object(
  {
    permissions: Type.Optional(Type.Object({ network: Type.Optional(SkillNetworkPermission) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
);
export type DaemonDriverManifest = Static<typeof DaemonDriverManifest>;
