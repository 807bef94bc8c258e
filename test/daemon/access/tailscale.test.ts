// TailscaleCli against a real executable: a missing CLI, and a stand-in that prints what tailscale
// prints (test/helpers/fake-tailscale.ts) in each situation — running, daemon down, signed out, the
// operator refusal, Serve not enabled (the CLI waits for a browser: svc stops it and names the URL).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TailscaleCli, TailscaleError } from '../../../daemon/access/tailscale';
import type { TunnelFailure } from '../../../protocol/access';
import { fakeTailscale } from '../../helpers/fake-tailscale';

const cli = (executable: string): TailscaleCli => new TailscaleCli({ executable, timeoutMs: 10_000, user: 'pi' });

const failure = (reason: TunnelFailure, fix: RegExp) => (err: unknown) => {
  assert.ok(err instanceof TailscaleError, String(err));
  assert.equal(err.failure.reason, reason, err.message);
  assert.match(err.failure.fix, fix);
  return true;
};

void test('running: serve proxies the target on the tailnet and answers the URL it printed; unserve turns it off', async (t) => {
  const fake = fakeTailscale(t, 'running');
  const tailscale = cli(fake.executable);
  assert.equal(await tailscale.machine(), 'brain.tail1234.ts.net');
  assert.equal(await tailscale.serve('http://127.0.0.1:9090'), 'https://brain.tail1234.ts.net');
  assert.equal(fake.serving(), 'http://127.0.0.1:9090');
  await tailscale.unserve();
  assert.equal(fake.serving(), null);
  assert.deepEqual(fake.calls(), [
    ['status', '--json'],
    ['status', '--json'],
    ['serve', '--bg', '--yes', 'http://127.0.0.1:9090'],
    ['serve', '--https=443', 'off'],
  ]);
});

void test('no CLI: cli_missing, with how to install it', async () => {
  await assert.rejects(cli('/nonexistent/tailscale').serve('http://127.0.0.1:9090'), failure('cli_missing', /tailscale\.com\/install\.sh.*tailscale up/));
  await assert.rejects(cli('svc-no-such-tailscale-cli').unserve(), failure('cli_missing', /install/));
});

void test('the daemon is not running: daemon_not_running, start it', async (t) => {
  const fake = fakeTailscale(t, 'daemon_down');
  await assert.rejects(cli(fake.executable).serve('http://127.0.0.1:9090'), failure('daemon_not_running', /systemctl enable --now tailscaled/));
  await assert.rejects(cli(fake.executable).unserve(), failure('daemon_not_running', /tailscaled/));
});

void test('signed out: logged_out, sign in with tailscale up; serve is not tried', async (t) => {
  const fake = fakeTailscale(t, 'logged_out');
  await assert.rejects(cli(fake.executable).serve('http://127.0.0.1:9090'), failure('logged_out', /sudo tailscale up/));
  assert.deepEqual(fake.calls(), [['status', '--json']]);
});

void test("the brain's user is not the operator: permission_denied naming the user, not $USER", async (t) => {
  const fake = fakeTailscale(t, 'operator_denied');
  await assert.rejects(cli(fake.executable).serve('http://127.0.0.1:9090'), failure('permission_denied', /^let the brain's user configure Serve once: `sudo tailscale set --operator=pi`$/));
});

void test('Serve not enabled on the tailnet: the waiting CLI is stopped and the enable URL is the fix', async (t) => {
  const fake = fakeTailscale(t, 'serve_not_enabled');
  await assert.rejects(cli(fake.executable).serve('http://127.0.0.1:9090'), failure('serve_not_enabled', /^open https:\/\/login\.tailscale\.com\/f\/serve\?node=nTESTNODE11CNTRL to enable Serve/));
});

void test('a CLI that does not answer within the timeout is killed and reported', async (t) => {
  const fake = fakeTailscale(t, 'hang');
  const slow = new TailscaleCli({ executable: fake.executable, timeoutMs: 200, user: 'pi' });
  await assert.rejects(slow.serve('http://127.0.0.1:9090'), (err: unknown) => err instanceof TailscaleError && err.failure.reason === 'failed' && /did not finish within 200 ms/.test(err.message));
});
