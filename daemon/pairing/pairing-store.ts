// The pairing tables (docs/pairing.md "What the brain keeps"): pairing tokens and paired devices, by the
// sha256 of their secrets only. Every change of a token's state is one store write
// transaction that re-reads the row first, so two requests racing on one token cannot both pass.
import type { Db, Migration } from '../kernel/capability';
import type { PairKind } from '../../protocol/pairing';

export const PAIRING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'pairing tokens and paired devices',
    up: `CREATE TABLE pair_tokens (
      pair_id TEXT PRIMARY KEY,
      token_hash TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL,
      name TEXT,
      node_id TEXT,
      pin_salt TEXT,
      pin_hash TEXT,
      pin_verified INTEGER NOT NULL DEFAULT 0,
      pin_failures INTEGER NOT NULL DEFAULT 0,
      state TEXT NOT NULL,
      created_at REAL NOT NULL,
      expires_at REAL NOT NULL,
      ended_at REAL,
      device_id TEXT
    );
    CREATE INDEX pair_tokens_state ON pair_tokens (state, created_at);
    CREATE TABLE paired_devices (
      device_id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      name TEXT NOT NULL,
      node_id TEXT,
      platform TEXT,
      key_hash TEXT NOT NULL UNIQUE,
      pair_id TEXT,
      paired_at REAL NOT NULL,
      revoked_at REAL
    );
`,
  },
];

/** A token row: `state` is what was stored (unclaimed, claimed, revoked); expiry is decided on read. */
export interface TokenRow {
  pair_id: string;
  token_hash: string;
  kind: PairKind;
  name: string | null;
  node_id: string | null;
  pin_salt: string | null;
  pin_hash: string | null;
  pin_verified: number;
  pin_failures: number;
  state: 'unclaimed' | 'claimed' | 'revoked';
  created_at: number;
  expires_at: number;
  device_id: string | null;
}

export interface DeviceRow {
  device_id: string;
  kind: PairKind;
  name: string;
  node_id: string | null;
  platform: string | null;
  key_hash: string;
  pair_id: string | null;
  paired_at: number;
}

const TOKEN_COLUMNS = 'pair_id, token_hash, kind, name, node_id, pin_salt, pin_hash, pin_verified, pin_failures, state, created_at, expires_at, device_id';
const DEVICE_COLUMNS = 'device_id, kind, name, node_id, platform, key_hash, pair_id, paired_at';

export const tokenByHash = (db: Db, hash: string): TokenRow | undefined => db.get<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM pair_tokens WHERE token_hash = ?`, [hash]);

export const tokenById = (db: Db, pairId: string): TokenRow | undefined => db.get<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM pair_tokens WHERE pair_id = ?`, [pairId]);

export function insertToken(db: Db, t: TokenRow): void {
  db.run(`INSERT INTO pair_tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    t.pair_id, t.token_hash, t.kind, t.name, t.node_id, t.pin_salt, t.pin_hash, t.pin_verified, t.pin_failures, t.state, t.created_at, t.expires_at, t.device_id,
  ]);
}

export const unclaimedTokens = (db: Db): TokenRow[] => db.all<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM pair_tokens WHERE state = 'unclaimed' ORDER BY created_at, pair_id`);

/** Moves a token out of unclaimed; false when it was no longer unclaimed (a racing request won). */
export const endToken = (db: Db, pairId: string, state: 'claimed' | 'revoked', at: number, deviceId: string | null = null): boolean =>
  db.run(`UPDATE pair_tokens SET state = ?, ended_at = ?, device_id = ? WHERE pair_id = ? AND state = 'unclaimed'`, [state, at, deviceId, pairId]).changes === 1;

export const insertDevice = (db: Db, d: DeviceRow): void => {
  db.run(`INSERT INTO paired_devices (${DEVICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [d.device_id, d.kind, d.name, d.node_id, d.platform, d.key_hash, d.pair_id, d.paired_at]);
};

export const activeDevices = (db: Db): DeviceRow[] => db.all<DeviceRow>(`SELECT ${DEVICE_COLUMNS} FROM paired_devices WHERE revoked_at IS NULL ORDER BY paired_at, device_id`);

export const activeDevice = (db: Db, deviceId: string): DeviceRow | undefined =>
  db.get<DeviceRow>(`SELECT ${DEVICE_COLUMNS} FROM paired_devices WHERE device_id = ? AND revoked_at IS NULL`, [deviceId]);

/** Revokes a device; false when it was not paired (or already revoked). */
export const revokeDevice = (db: Db, deviceId: string, at: number): boolean =>
  db.run('UPDATE paired_devices SET revoked_at = ? WHERE device_id = ? AND revoked_at IS NULL', [at, deviceId]).changes === 1;
