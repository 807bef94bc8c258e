// The CLI and held tool calls (issue 11, spec 3.1), on the built brain with the fake OpenAI server:
// on a terminal `svc '<msg>'` and the REPL ask "approve? [y/N]" inline, resolve the request for
// their session and print the continuation's answer; without a terminal the one-shot prints the
// request id and the commands that resolve it, and leaves the request pending.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { SVC } from '../helpers/brain-process';
import { runInPty } from '../helpers/pty';
import type { ApprovalList } from '../../protocol/approvals';
import { CONTINUED, WAITING, approvalsBrain, holdText, type ApprovalsBrain } from './approvals-rig';

const env = (rig: ApprovalsBrain): NodeJS.ProcessEnv => ({ ...process.env, SVC_HOME: rig.brain.home, SVC_API_TOKEN: rig.brain.token });

const pending = async (rig: ApprovalsBrain): Promise<ApprovalList> => (await (await rig.brain.api('/api/approvals')).json()) as ApprovalList;

void test('svc \'<msg>\' on a terminal asks inline: y runs the call once and prints the continuation; n rejects it', { timeout: 90_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const yes = runInPty(`${process.execPath} ${SVC} --url ${rig.brain.url} '${holdText('ptyyes')}'`, env(rig));
  t.after(() => yes.kill());
  await yes.until(/run_command \{"argv":\["\/bin\/sh","-c","echo ptyyes >> runs\.log"\],"cwd":"[^"]+"\}\napprove\? \[y\/N\] $/);
  assert.equal(rig.ran('ptyyes'), 0, 'nothing runs before the answer');
  yes.write('y\r');
  assert.equal(await yes.exited, 0);
  assert.ok(yes.output().includes(WAITING), 'the turn that asked is printed');
  assert.ok(yes.output().includes(CONTINUED), `the continuation is printed:\n${yes.output()}`);
  assert.equal(rig.ran('ptyyes'), 1);

  const no = runInPty(`${process.execPath} ${SVC} --url ${rig.brain.url} '${holdText('ptyno')}'`, env(rig));
  t.after(() => no.kill());
  await no.until(/approve\? \[y\/N\] $/);
  no.write('\r');
  assert.equal(await no.exited, 0);
  assert.match(no.output(), /rejected; run_command will not run/);
  assert.ok(no.output().includes(CONTINUED), 'the model is told and answers');
  assert.equal(rig.ran('ptyno'), 0);
  assert.equal((await pending(rig)).count, 0);
  const told = rig.continuations.at(-1);
  assert.match(JSON.stringify(told?.body), /the user rejected this call/);
});

void test('svc \'<msg>\' without a terminal prints the request id and the commands that resolve it; the request stays pending', { timeout: 60_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const child = spawn(process.execPath, [SVC, '--url', rig.brain.url, holdText('piped')], { env: env(rig), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, err);
  assert.ok(out.includes(WAITING));
  const list = await pending(rig);
  assert.equal(list.count, 1);
  const id = list.approvals[0]!.request_id;
  assert.ok(err.includes(`is waiting for your approval (request ${id}):\n  svc twin approvals approve ${id}\n  svc twin approvals reject ${id}\n`), err);
  assert.equal(rig.ran('piped'), 0);
});

void test('the REPL asks inline after its turn, runs the approved call and shows the continuation before the next prompt', { timeout: 90_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const pty = runInPty(`${process.execPath} ${SVC} --url ${rig.brain.url}`, env(rig));
  t.after(() => pty.kill());
  await pty.until(/\/help for commands/);
  pty.write(`${holdText('repl')}\r`);
  await pty.until(/\? run_command needs your approval \(request [\w-]+\)/);
  await pty.until(/approve\? \[y\/N\] $/);
  pty.write('yes\r');
  await pty.until(new RegExp(`\\[approval\\] You approved run_command \\(approval request [\\w-]+\\); it ran: [^\\n]*\\n${CONTINUED}\\n› $`));
  assert.equal(rig.ran('repl'), 1);
  pty.write('/quit\r');
  assert.equal(await pty.exited, 0);
});
