// svc pair against an assembled brain on loopback (real HTTP): the 409 with its fix in localhost mode,
// the QR and URL printed, the wait that ends when a device claims the token (the device claims it from
// the URL while svc waits), the code claim, list, prune and revoke; and the argument checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { io } from '../../helpers/cli-rig';
import { pair, pairCode, pairList, pairPrune, pairQuery, pairRevoke, describePaired } from '../../../cli/commands/pair';
import { parsePairUrl } from '../../../mesh/pair-payload';
import type { Connection } from '../../../cli/connection';

async function brain(t: Parameters<typeof inProcessBrain>[0]) {
  const b = await inProcessBrain(t);
  const url = `http://127.0.0.1:${(b.brain.app.server.address() as AddressInfo).port}`;
  const conn: Connection = { url, token: b.token, home: b.home };
  return { ...b, url, conn };
}

void test('pairQuery: kinds, pin, name, node id and ttl; bad ones are exit 2 before any call', () => {
  assert.equal(pairQuery({ pin: false }), '');
  assert.equal(pairQuery({ kind: 'node', pin: true, name: 'Porch light', nodeId: 'esp:1', ttl: '120' }), '?kind=node&pin=true&name=Porch+light&node_id=esp%3A1&ttl_seconds=120');
  assert.deepEqual(pairQuery({ kind: 'toaster', pin: false }), { problem: '--kind is one of node, phone, browser, brain' });
  assert.deepEqual(pairQuery({ ttl: '1e3', pin: false }), { problem: '--ttl is a number of seconds' });
});

void test('svc pair in localhost mode: exit 1 and the command that fixes it', async (t) => {
  const b = await brain(t);
  const { text, io: cli } = io();
  assert.equal(await pair(b.conn, cli, { pin: false, wait: true, json: false }), 1);
  assert.match(text.err, /loopback only/);
  assert.match(text.err, /fix: run `svc access lan`, then `svc pair` again/);
});

void test('svc pair prints the QR code and URL, then waits until the device claims the token from the URL', async (t) => {
  const b = await brain(t);
  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: [b.url], at: 0 });
  const { text, io: cli } = io();
  let polls = 0;
  const deps = {
    now: Date.now,
    sleep: async () => {
      polls++;
      // The phone scans what svc printed and completes pairing from it.
      const url = /svc:\/\/pair\?\S+/.exec(text.out)![0];
      const payload = parsePairUrl(url);
      const verified = await fetch(`${payload.urls[0]!}/api/devices/pair/verify_pin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: payload.token, pin: /PIN \(type it on the device\): (\d+)/.exec(text.out)![1] }) });
      assert.equal(verified.status, 200);
      const done = await fetch(`${payload.urls[0]!}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: payload.token }) });
      assert.equal(done.status, 201);
    },
  };
  assert.equal(await pair(b.conn, cli, { pin: true, name: 'Ada phone', wait: true, json: false }, deps), 0, text.err);
  assert.equal(polls, 1);
  assert.match(text.out, /▄/, 'a QR code of block characters');
  assert.match(text.out, /paired phone "Ada phone" as dev_/);

  const list = io();
  assert.equal(await pairList(b.conn, list.io, { all: true, json: true }), 0);
  const listed = JSON.parse(list.text.out) as { devices: { device_id: string }[]; unclaimed: unknown[] };
  assert.equal(listed.devices.length, 1);
  const revoke = io();
  assert.equal(await pairRevoke(b.conn, revoke.io, listed.devices[0]!.device_id), 0);
  assert.match(revoke.text.out, /^revoked dev_/);
  assert.equal(await pairRevoke(b.conn, io().io, listed.devices[0]!.device_id), 1);
});

void test('svc pair --json --no-wait; a token that expires while svc waits is exit 1; prune; pair code', async (t) => {
  const b = await brain(t);
  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: [b.url], at: 0 });
  const minted = io();
  assert.equal(await pair(b.conn, minted.io, { pin: false, wait: false, json: true }), 0);
  assert.equal(typeof (JSON.parse(minted.text.out) as { pair_id: string }).pair_id, 'string');

  const waiting = io();
  let clock = Date.now();
  const deps = { now: () => clock, sleep: async () => void (clock += 10 * 60_000 + 5_000) };
  assert.equal(await pair(b.conn, waiting.io, { pin: false, ttl: '60', wait: true, json: false }, deps), 1);
  assert.match(waiting.text.err, /expired before a device claimed it/);

  const pruned = io();
  assert.equal(await pairPrune(b.conn, pruned.io, { json: false }), 0);
  assert.equal(pruned.text.out, 'revoked 2 unclaimed pairing tokens\n');
  assert.equal(await pairPrune(b.conn, io().io, { olderThan: 'soon', json: false }), 2);

  const code = io();
  assert.equal(await pairCode(b.conn, code.io, '123 456', false), 1);
  assert.match(code.text.err, /no node is showing this code/);
  await fetch(`${b.url}/api/devices/pair/announce`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: '123456', node_id: 'porch' }) });
  const claimed = io();
  assert.equal(await pairCode(b.conn, claimed.io, '123 456', false), 0);
  assert.match(claimed.text.out, /^paired node porch \("porch"\) as dev_/);
  assert.match(describePaired({ count: 0, devices: [], unclaimed: [] }), /no paired devices/);
});
