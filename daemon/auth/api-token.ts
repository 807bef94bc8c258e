// The API bearer token (spec 5.2): SVC_API_TOKEN, else the systemd credential `api-token`, else
// $SVC_HOME/api-token, created 0600 on first start. Compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write';
import { ADMIN } from './principal';
import type { CredentialVerifier } from './authenticate';

export function loadApiToken(opts: { home: string; envToken?: string | undefined; credentialsDir?: string | undefined }): string {
  if (opts.envToken?.trim()) return opts.envToken.trim();
  if (opts.credentialsDir) {
    const cred = join(opts.credentialsDir, 'api-token');
    if (existsSync(cred)) return readFileSync(cred, 'utf8').trim();
  }
  const file = join(opts.home, 'api-token');
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileAtomic(file, `${token}\n`, 0o600);
  return token;
}

/** Constant-time comparison; hashing first makes the length of the guess irrelevant too. */
export function tokenMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/** The admin's credential store: the one API token. Its hash is taken once, not per request. */
export function apiTokenVerifier(token: string): CredentialVerifier {
  const expected = sha256(token);
  return { verify: (credential) => (timingSafeEqual(expected, sha256(credential.token)) ? ADMIN : undefined) };
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();
