// The README's quick start exactly, as a new user meets it: `npm start` in a terminal, from an empty
// $HOME, through the setup wizard into the chat, one message, /quit; then `node dist/svc.mjs stop`.
// It caught the first-run crash where the CLI read the API token before the brain had created it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempHome } from '../helpers/brain-process';
import { runInPty } from '../helpers/pty';
import { freePort, runSvc } from './fixtures/processes';

/** The environment of a new user: nothing of svc's, an empty home, a port no other test uses. */
function newUserEnv(home: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && !k.startsWith('npm_')) env[k] = v;
  return { ...env, HOME: home, SVC_HOME: join(home, '.svc'), SVC_PORT: String(port) };
}

void test('README quick start: npm start on an empty home runs the wizard, then the chat; one message; /quit', { timeout: 180_000 }, async (t) => {
  const home = tempHome('svc-first-run-');
  const port = await freePort();
  const env = newUserEnv(home, port);
  const svcHome = join(home, '.svc');
  t.after(async () => {
    const stopped = await runSvc(['stop'], { SVC_HOME: svcHome });
    assert.equal(stopped.code, 0, stopped.stdout + stopped.stderr);
    rmSync(home, { recursive: true, force: true });
  });
  const pty = runInPty('npm start', env, ROOT);
  t.after(() => pty.kill());
  // npm start may first rebuild dist/ (when a source is newer): a bound of minutes, not seconds.
  await pty.until(new RegExp(`brain running at http://127\\.0\\.0\\.1:${port} \\(svc [^,]+, pid \\d+\\)`), 150_000);
  await pty.until(/What should I call you\?/);
  pty.write('Ada\r');
  await pty.until(/What is the assistant's name\?/);
  pty.write('\r'); // keep the name the brain suggests
  await pty.until(/Which personality\?/);
  pty.write('\r'); // keep the current one
  await pty.until(/Which model should answer\?/);
  pty.write('\r'); // the built-in local agent
  await pty.until(/session ses_\S+\. \/help for commands/);
  pty.write('remember that the spare key is under the blue pot\r');
  await pty.until(/I'll remember that the spare key is under the blue pot\./);
  pty.write('/quit\r');
  assert.equal(await pty.exited, 0, pty.output());
  const screen = pty.output();
  assert.doesNotMatch(screen, /TypeError|SessionError|401|\n\s+at /, 'no crash, no refused token, no stack trace');
  const token = readFileSync(join(svcHome, 'api-token'), 'utf8').trim();
  const twin = (await (await fetch(`http://127.0.0.1:${port}/api/identity/twin`, { headers: { authorization: `Bearer ${token}` } })).json()) as { name: string | null };
  assert.equal(twin.name, 'Ada', 'the wizard saved the answers through the API');
  assert.ok(existsSync(join(svcHome, 'setup.json')), 'the first run is marked done');
});
