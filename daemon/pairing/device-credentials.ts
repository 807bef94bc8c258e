// The credential store of paired devices (docs/pairing.md "Device principals"): a map from the sha256
// of each live device key to the principal it proves, loaded from the store at start and changed with
// every claim and revoke — so a revoked key fails on the very next request, and a lookup costs one hash
// and one map read in the request hook. A key's kind fixes what it may do: a phone or browser is a
// `device` principal (/v1/session, approvals, its own push registration), a node key a `node`
// (/v1/node only), a brain key a `peer` (/sync only); routes decide by kind (daemon/http/auth.ts).
import type { CapabilityVerifier, CredentialPrincipal } from '../kernel/capability';
import { isDeviceKey, secretHash } from '../../mesh/pair-token';
import type { PairKind } from '../../protocol/pairing';

/** What a phone or browser may do, by name (the routes that accept `device` principals). */
export const DEVICE_SCOPES = (deviceId: string): string[] => ['session', 'approvals', `push:${deviceId}`];

export function principalFor(kind: PairKind, deviceId: string): CredentialPrincipal {
  switch (kind) {
    case 'phone':
    case 'browser':
      return Object.freeze({ kind: 'device', id: deviceId, deviceKind: kind, scopes: Object.freeze(DEVICE_SCOPES(deviceId)) });
    case 'node':
      return Object.freeze({ kind: 'node', id: deviceId });
    case 'brain':
      return Object.freeze({ kind: 'peer', id: deviceId });
  }
}

/** principalId() of daemon/auth/principal.ts for a device: how its sockets are listed. */
export const devicePrincipalId = (kind: PairKind, deviceId: string): string => `${principalFor(kind, deviceId).kind}:${deviceId}`;

export class DeviceCredentials implements CapabilityVerifier {
  private readonly byHash = new Map<string, CredentialPrincipal>();
  private readonly hashOf = new Map<string, string>();

  /**
   * A node's principal is named by its node_id (what it registers as on /v1/node; the device id when
   * it was paired without one), every other kind's by its device id.
   */
  add(keyHash: string, kind: PairKind, deviceId: string, nodeId: string | null = null): void {
    this.byHash.set(keyHash, principalFor(kind, kind === 'node' ? (nodeId ?? deviceId) : deviceId));
    this.hashOf.set(deviceId, keyHash);
  }

  remove(deviceId: string): void {
    const hash = this.hashOf.get(deviceId);
    if (hash !== undefined) this.byHash.delete(hash);
    this.hashOf.delete(deviceId);
  }

  get size(): number {
    return this.byHash.size;
  }

  verify(credential: { readonly token: string }): CredentialPrincipal | undefined {
    if (!isDeviceKey(credential.token)) return undefined;
    return this.byHash.get(secretHash(credential.token));
  }
}
