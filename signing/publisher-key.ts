// The publisher identity (spec 4.14 `svc app sign`, `svc publisher`; 5.1.6): one Ed25519 keypair at
// `<dir>/publisher.key` (the CLI passes ~/.svc), made once and never replaced, since every host that
// trusts this publisher pinned its public key. The file holds one JSON object {v: 1, key_id, public_key,
// private_key} (protocol/signing.ts PublisherKeyFile), keys raw base64; key_id is derived from the public
// key (signing/ed25519.ts keyIdOf). Creation is exclusive and atomic (mesh/create-once.ts: a hard link of
// a fully written 0600 temp file), so racing creators agree on one key and a crash never leaves a torn
// file. A damaged file is an error that names the fix, never a silent new identity.
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { PublisherKeyFile } from '../protocol/signing';
import { createOnce, readIfExists } from '../mesh/create-once';
import { keyIdOf, privateKeyOf, rawPrivateKey, rawPublicKey, SigningKeyError, type SigningKey } from './ed25519';

export const PUBLISHER_KEY_FILE = 'publisher.key';

/** The publisher identity: a signing key with its public key (raw base64) to give to hosts. */
export interface PublisherKey extends SigningKey {
  readonly publicKey: string;
}

export class PublisherKeyError extends Error {}

const checkFile = TypeCompiler.Compile(PublisherKeyFile);

/** The publisher key of `<dir>/publisher.key`, made (with `dir`, 0700) when missing. */
export function loadOrCreatePublisherKey(dir: string): PublisherKey {
  const existing = readPublisherKey(dir);
  if (existing !== undefined) return existing;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  createOnce(join(dir, PUBLISHER_KEY_FILE), `${JSON.stringify(freshKeyFile())}\n`);
  const kept = readPublisherKey(dir);
  if (kept === undefined) throw new PublisherKeyError(`${join(dir, PUBLISHER_KEY_FILE)} vanished while it was being created`);
  return kept;
}

/** The publisher key of `<dir>/publisher.key`, or undefined when there is none (nothing is created). */
export function readPublisherKey(dir: string): PublisherKey | undefined {
  const file = join(dir, PUBLISHER_KEY_FILE);
  const text = readIfExists(file);
  return text === undefined ? undefined : parseKeyFile(file, text);
}

function freshKeyFile(): PublisherKeyFile {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { v: 1, key_id: keyIdOf(publicKey), public_key: publicKey, private_key: rawPrivateKey(privateKey) };
}

function parseKeyFile(file: string, text: string): PublisherKey {
  const damaged = (why: string): PublisherKeyError =>
    new PublisherKeyError(`${file} does not hold a publisher key (${why}); hosts trust this publisher by it: restore it from a backup, or delete it (a new key is made on next use) and have every host trust the new key`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) throw damaged('not JSON');
    throw err;
  }
  if (!checkFile.Check(value)) throw damaged(`expected {v: 1, key_id, public_key, private_key}`);
  if (value.key_id !== keyIdOf(value.public_key)) throw damaged('the key id is not derived from the public key');
  try {
    return { keyId: value.key_id, publicKey: value.public_key, privateKey: privateKeyOf(value.public_key, value.private_key) };
  } catch (err) {
    if (err instanceof SigningKeyError) throw damaged(err.message);
    throw err;
  }
}
