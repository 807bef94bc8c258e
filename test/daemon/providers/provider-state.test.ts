// ProviderState keeps no secret: cooldown messages quote provider errors, which may echo a key in any
// encoding; they pass the secret scrubber before they are kept in memory or written to brain.db, and
// rows written before (by an older brain) are cleaned when the state loads (issue 8 §4). Real SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretScrubber } from '../../../daemon/agent/tools/secret-scrubber';
import { ProviderState } from '../../../daemon/providers/provider-state';
import { tempStore } from './provider-fixtures';

const KEY = 'sk-state/+="\\Key-0123456789';
const scrubber = new SecretScrubber(() => [KEY]);
const scrub = (text: string): string => scrubber.scrub(text);
const echoes = `401 ${KEY} ${encodeURIComponent(KEY)} ${JSON.stringify(KEY)} ${Buffer.from(KEY).toString('base64')} ${KEY.slice(0, 8)}****${KEY.slice(-4)}`;

function dbHolds(dir: string, text: string): boolean {
  return readFileSync(join(dir, 'brain.db')).includes(Buffer.from(text));
}

void test('put scrubs the message before it is kept or stored, in every encoding', async (t) => {
  const db = tempStore();
  t.after(() => db.cleanup());
  const state = new ProviderState(db.store, scrub).load();
  await state.put({ provider: 'oai', label: 'main', errorClass: 'auth', untilMs: 10_000, strikes: 1, message: echoes }, 1);
  const kept = state.cooldown({ provider: 'oai', label: 'main' })!.message;
  assert.equal(kept, '401 [REDACTED] [REDACTED] "[REDACTED]" [REDACTED] [REDACTED]');
  db.reopen();
  assert.equal(new ProviderState(db.store, scrub).load().cooldown({ provider: 'oai', label: 'main' })!.message, kept);
  for (const form of [KEY, encodeURIComponent(KEY), Buffer.from(KEY).toString('base64'), KEY.slice(0, 8)]) assert.ok(!dbHolds(db.dir, form), `${form} is in brain.db`);
});

void test('load cleans rows an older brain stored with a key in them', async (t) => {
  const db = tempStore();
  t.after(() => db.cleanup());
  await new ProviderState(db.store).load().put({ provider: 'oai', label: null, errorClass: 'rate_limit', untilMs: 10_000, strikes: 2, message: echoes }, 1);
  assert.equal(db.store.get<{ message: string }>('SELECT message FROM provider_cooldowns')!.message, echoes.slice(0, 500));
  const state = new ProviderState(db.store, scrub).load();
  assert.ok(!state.cooldown({ provider: 'oai', label: null })!.message.includes(KEY.slice(0, 8)));
  assert.ok(!db.store.get<{ message: string }>('SELECT message FROM provider_cooldowns')!.message.includes(KEY.slice(0, 8)));
});
