// The pairing service on a real SQLite store (docs/pairing.md): tokens, PINs, claims (exactly once,
// also when two race), the paired list, prune, revoke (key fails at once, sockets closed), handoff,
// and the token state machine as a property: any sequence of operations keeps its invariants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../../../daemon/kernel/errors';
import { isDeviceKey, isPairToken } from '../../../mesh/pair-token';
import { parsePairUrl } from '../../../mesh/pair-payload';
import { BRAIN_ID, pairingRig } from './pairing-rig';

const rejectsWith = async (p: Promise<unknown>, status: number, code?: string): Promise<AppError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.status, status, `${err.code}: ${err.message}`);
    if (code) assert.equal(err.code, code);
    return err;
  }
  assert.fail(`expected a ${status}`);
};
const throwsWith = (fn: () => unknown, status: number): AppError => rejectsWithSync(fn, status);
function rejectsWithSync(fn: () => unknown, status: number): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.status, status, `${err.code}: ${err.message}`);
    return err;
  }
  assert.fail(`expected a ${status}`);
}

void test('mint → check → complete: a token is shown once, stored as a hash, claimed for a device key that verifies as the kind\'s principal', async (t) => {
  const rig = pairingRig(t);
  const minted = await rig.pairing.mint({ kind: 'phone', name: 'Ada phone' });
  assert.ok(isPairToken(minted.token));
  assert.equal(minted.expires_at - minted.created_at, 600, 'default lifetime 10 minutes');
  const stored = JSON.stringify(rig.store.all('SELECT * FROM pair_tokens'));
  assert.ok(!stored.includes(minted.token), 'the token itself is not stored');
  assert.deepEqual(rig.pairing.check(minted.token), { state: 'unclaimed', kind: 'phone', pin_required: false, pin_verified: false, expires_at: minted.expires_at });
  const done = await rig.pairing.complete({ token: minted.token, platform: 'ios' });
  assert.ok(isDeviceKey(done.device_key));
  assert.equal(done.name, 'Ada phone');
  assert.equal(done.brain_id, BRAIN_ID);
  assert.deepEqual(rig.credentials.verify({ token: done.device_key }), { kind: 'device', id: done.device_id, deviceKind: 'phone', scopes: ['session', 'approvals', `push:${done.device_id}`] });
  assert.equal(rig.credentials.verify({ token: minted.token }), undefined, 'a pairing token is no credential');
  assert.equal(rig.pairing.check(minted.token).state, 'claimed');
  const again = await rejectsWith(rig.pairing.complete({ token: minted.token }), 409);
  assert.deepEqual(again.details, { state: 'claimed' });
});

void test('node and brain keys prove node and peer principals; a node already paired is a 409 naming the revoke', async (t) => {
  const rig = pairingRig(t);
  const node = await rig.pairing.complete({ token: (await rig.pairing.mint({ kind: 'node', node_id: 'esp32-kitchen' })).token });
  assert.deepEqual(rig.credentials.verify({ token: node.device_key }), { kind: 'node', id: 'esp32-kitchen' });
  const brain = await rig.pairing.complete({ token: (await rig.pairing.mint({ kind: 'brain' })).token });
  assert.deepEqual(rig.credentials.verify({ token: brain.device_key }), { kind: 'peer', id: brain.device_id });
  const twice = await rejectsWith(rig.pairing.complete({ token: (await rig.pairing.mint({ kind: 'node', node_id: 'esp32-kitchen' })).token }), 409);
  assert.deepEqual(twice.details, { device_id: node.device_id, command: `svc pair revoke ${node.device_id}` });
  await rejectsWith(rig.pairing.mint({ kind: 'phone', node_id: 'x' }), 400);
});

void test('unknown, expired and revoked tokens: 404, then 409 naming the state; check says the state', async (t) => {
  const rig = pairingRig(t);
  await rejectsWith(rig.pairing.complete({ token: `svcpt_${'A'.repeat(43)}` }), 404);
  throwsWith(() => rig.pairing.check(`svcpt_${'A'.repeat(43)}`), 404);
  const short = await rig.pairing.mint({ ttl_seconds: 60 });
  rig.clock.t += 60_000;
  assert.equal(rig.pairing.check(short.token).state, 'expired');
  assert.deepEqual((await rejectsWith(rig.pairing.complete({ token: short.token }), 409)).details, { state: 'expired' });
  const revoked = await rig.pairing.mint({});
  await rig.pairing.revoke(revoked.pair_id);
  assert.deepEqual((await rejectsWith(rig.pairing.complete({ token: revoked.token }), 409)).details, { state: 'revoked' });
  await rejectsWith(rig.pairing.revoke(revoked.pair_id), 409);
  await rejectsWith(rig.pairing.revoke('pair_nope'), 404);
});

void test('PIN: complete is 401 until verified; the 5th wrong PIN revokes the token (counts survive the refusals); a right PIN then is too late', async (t) => {
  const rig = pairingRig(t);
  const minted = await rig.pairing.mint({ pin: true });
  assert.match(minted.pin ?? '', /^\d{6}$/);
  assert.ok(!JSON.stringify(rig.store.all('SELECT * FROM pair_tokens')).includes(`"${minted.pin!}"`));
  await rejectsWith(rig.pairing.complete({ token: minted.token }), 401, 'UNAUTHORIZED');
  const wrong = minted.pin === '000000' ? '111111' : '000000';
  for (let i = 1; i <= 4; i++) assert.deepEqual((await rejectsWith(rig.pairing.verifyPin(minted.token, wrong), 401)).details, { attempts_left: 5 - i, state: 'unclaimed' });
  assert.deepEqual((await rejectsWith(rig.pairing.verifyPin(minted.token, wrong), 401)).details, { attempts_left: 0, state: 'revoked' });
  assert.equal(rig.pairing.check(minted.token).state, 'revoked');
  await rejectsWith(rig.pairing.verifyPin(minted.token, minted.pin!), 409);
  await rejectsWith(rig.pairing.complete({ token: minted.token }), 409);

  const ok = await rig.pairing.mint({ pin: '4821' });
  assert.equal(ok.pin, undefined, 'a PIN the caller chose is not echoed');
  await rig.pairing.verifyPin(ok.token, '4821');
  assert.equal(rig.pairing.check(ok.token).pin_verified, true);
  await rig.pairing.complete({ token: ok.token });
  await rejectsWith(rig.pairing.verifyPin((await rig.pairing.mint({})).token, '1234'), 400);
});

void test('two racing claims of one token: exactly one credential', async (t) => {
  const rig = pairingRig(t);
  for (let round = 0; round < 5; round++) {
    const { token } = await rig.pairing.mint({ kind: 'browser' });
    const results = await Promise.allSettled([rig.pairing.complete({ token }), rig.pairing.complete({ token }), rig.pairing.complete({ token })]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as AppError).status, 409);
  }
  assert.equal(rig.pairing.list(false).count, 5);
});

void test('paired list with connections; include_unclaimed adds tokens; prune revokes unclaimed ones older than N seconds', async (t) => {
  const rig = pairingRig(t);
  const phone = await rig.pairing.complete({ token: (await rig.pairing.mint({ name: 'p' })).token });
  rig.connections.open.push({ principal: `device:${phone.device_id}`, connection: 'wsc_1', sessionId: null });
  const old = await rig.pairing.mint({ kind: 'node' });
  rig.clock.t += 120_000;
  const fresh = await rig.pairing.mint({ kind: 'browser', pin: true });
  const list = rig.pairing.list(true);
  assert.equal(list.count, 1);
  assert.equal(list.devices[0]!.connections, 1);
  assert.deepEqual(list.unclaimed!.map((u) => [u.pair_id, u.state, u.pin_required]), [[old.pair_id, 'unclaimed', false], [fresh.pair_id, 'unclaimed', true]]);
  assert.equal(rig.pairing.list(false).unclaimed, undefined);
  assert.deepEqual(await rig.pairing.prune(60), { revoked: 1, pair_ids: [old.pair_id] });
  assert.deepEqual(await rig.pairing.prune(), { revoked: 1, pair_ids: [fresh.pair_id] });
  assert.deepEqual(rig.pairing.list(true).unclaimed, []);
});

void test('revoke: the key stops verifying at once, the device\'s sockets are closed with 4001, a restart does not bring it back', async (t) => {
  const rig = pairingRig(t);
  const phone = await rig.pairing.complete({ token: (await rig.pairing.mint({})).token });
  const other = await rig.pairing.complete({ token: (await rig.pairing.mint({})).token });
  rig.connections.open.push({ principal: `device:${phone.device_id}`, connection: 'a', sessionId: 's' }, { principal: `device:${other.device_id}`, connection: 'b', sessionId: null });
  assert.deepEqual(await rig.pairing.revoke(phone.device_id), { id: phone.device_id, revoked: true, connections_closed: 1 });
  assert.equal(rig.credentials.verify({ token: phone.device_key }), undefined);
  assert.ok(rig.credentials.verify({ token: other.device_key }));
  assert.deepEqual(rig.connections.closed, [{ principal: `device:${phone.device_id}`, code: 4001 }]);
  assert.deepEqual(rig.events, [{ type: 'device_revoked', kind: 'phone', deviceId: phone.device_id, nodeId: null, at: rig.clock.t }], 'announced for sockets outside /v1/session (a node\'s /v1/node link)');
  await rejectsWith(rig.pairing.revoke(phone.device_id), 404);
  const restarted = pairingRig(t, { dir: rig.dir });
  assert.equal(restarted.credentials.verify({ token: phone.device_key }), undefined);
  assert.ok(restarted.credentials.verify({ token: other.device_key }), 'live keys are loaded at start');
});

void test('pair URL: 409 naming `svc access lan` in localhost mode; else the payload lists the URLs and mDNS name and parses back', async (t) => {
  const rig = pairingRig(t);
  const refused = await rejectsWith(rig.pairing.pairUrl({}), 409, 'CONFLICT');
  assert.deepEqual(refused.details, { mode: 'localhost', command: 'svc access lan' });
  rig.reach.mode = 'lan';
  rig.reach.urls = ['http://192.0.2.10:9090'];
  rig.reach.mdns = 'pi.local:9090';
  const made = await rig.pairing.pairUrl({ kind: 'phone', pin: true });
  const parsed = parsePairUrl(made.url);
  assert.deepEqual(parsed, made.payload);
  assert.equal(parsed.brain_id, BRAIN_ID);
  assert.deepEqual(parsed.urls, ['http://192.0.2.10:9090']);
  assert.equal(parsed.mdns, 'pi.local:9090');
  assert.equal(parsed.pin_required, true);
  assert.match(made.pin!, /^\d{6}$/);
  assert.ok(!made.url.includes(made.pin!), 'the PIN is never in the URL');
  assert.equal(rig.pairing.check(parsed.token).state, 'unclaimed');
});

void test('a pair URL of kind brain names the brain\'s sync key fingerprint (when it has one); other kinds never do', async (t) => {
  const key = 'pASzN1sXn7eo2f_KhhmB_D_MOntAlqaR2Xa8cThXL1Q';
  const rig = pairingRig(t, { syncKey: key });
  rig.reach.mode = 'lan';
  rig.reach.urls = ['http://192.0.2.10:9090'];
  assert.equal(parsePairUrl((await rig.pairing.pairUrl({ kind: 'brain' })).url).key, key);
  assert.equal(parsePairUrl((await rig.pairing.pairUrl({ kind: 'phone' })).url).key, undefined);
  const without = pairingRig(t);
  without.reach.mode = 'lan';
  without.reach.urls = ['http://192.0.2.10:9090'];
  assert.equal(parsePairUrl((await without.pairing.pairUrl({ kind: 'brain' })).url).key, undefined, 'sync off: no key to name');
});

void test('handoff: both devices must be paired phones/browsers; a device may hand off only its own session', async (t) => {
  const rig = pairingRig(t);
  const a = await rig.pairing.complete({ token: (await rig.pairing.mint({})).token });
  const b = await rig.pairing.complete({ token: (await rig.pairing.mint({ kind: 'browser' })).token });
  const n = await rig.pairing.complete({ token: (await rig.pairing.mint({ kind: 'node' })).token });
  const body = { session_id: 'ses_1', from_device_id: a.device_id, to_device_id: b.device_id };
  assert.deepEqual(rig.pairing.handoff(body, { kind: 'admin' }), { session_id: 'ses_1', attached: 1, detached: 1 });
  assert.deepEqual(rig.connections.handoffs, [{ sessionId: 'ses_1', from: `device:${a.device_id}`, to: `device:${b.device_id}` }]);
  rig.pairing.handoff(body, { kind: 'device', id: a.device_id });
  throwsWith(() => rig.pairing.handoff(body, { kind: 'device', id: b.device_id }), 403);
  throwsWith(() => rig.pairing.handoff({ ...body, to_device_id: n.device_id }, { kind: 'admin' }), 400);
  throwsWith(() => rig.pairing.handoff({ ...body, to_device_id: 'dev_nope' }, { kind: 'admin' }), 404);
  throwsWith(() => rig.pairing.handoff({ ...body, to_device_id: a.device_id }, { kind: 'admin' }), 400);
});

/** The claim state machine as a property: random operations on a few tokens, against a model. */
void test('property: whatever the order of PINs, claims, revokes and time, a token yields at most one credential, final states stay final, 5 wrong PINs revoke', async (t) => {
  const rig = pairingRig(t);
  type Op = { op: 'claim' | 'rightPin' | 'wrongPin' | 'revoke' | 'tick'; i: number; s: number };
  const opArb = fc.record({ op: fc.constantFrom<Op['op']>('claim', 'rightPin', 'wrongPin', 'revoke', 'tick'), i: fc.nat(2), s: fc.integer({ min: 1, max: 400 }) });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.array(opArb, { maxLength: 30 }), async (pins, ops) => {
      const tokens = await Promise.all(pins.map((pin) => rig.pairing.mint({ ...(pin ? { pin: '2468' } : {}), ttl_seconds: 600 })));
      const model = tokens.map((tk, i) => ({ state: 'unclaimed', pin: pins[i] === true, verified: false, wrong: 0, credentials: 0, expires: tk.expires_at }));
      for (const { op, i, s } of ops) {
        const tk = tokens[i]!;
        const m = model[i]!;
        const now = rig.clock.t / 1000;
        if (m.state === 'unclaimed' && now >= m.expires) m.state = 'expired';
        const settle = async (p: Promise<unknown>): Promise<number> => p.then(() => 200, (err: unknown) => (err instanceof AppError ? err.status : 500));
        if (op === 'tick') rig.clock.t += s * 1000;
        else if (op === 'claim') {
          const status = await settle(rig.pairing.complete({ token: tk.token }));
          const expected = m.state !== 'unclaimed' ? 409 : m.pin && !m.verified ? 401 : 200;
          assert.equal(status, expected);
          if (status === 200) {
            m.state = 'claimed';
            m.credentials++;
          }
        } else if (op === 'rightPin' || op === 'wrongPin') {
          const status = await settle(rig.pairing.verifyPin(tk.token, op === 'rightPin' ? '2468' : '1357'));
          const expected = m.state !== 'unclaimed' ? 409 : !m.pin ? 400 : op === 'rightPin' ? 200 : 401;
          assert.equal(status, expected);
          if (status === 200) m.verified = true;
          if (status === 401 && ++m.wrong >= 5) m.state = 'revoked';
        } else {
          const status = await settle(rig.pairing.revoke(tk.pair_id));
          assert.equal(status, m.state === 'unclaimed' ? 200 : 409);
          if (status === 200) m.state = 'revoked';
        }
        assert.equal(rig.pairing.check(tk.token).state, rig.clock.t / 1000 >= m.expires && m.state === 'unclaimed' ? 'expired' : m.state);
        assert.ok(m.credentials <= 1);
      }
    }),
    { numRuns: 60 },
  );
});
