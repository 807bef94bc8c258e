import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderQr } from '../../../daemon/pairing/pair-qr';
import { runToolOk } from '../../helpers/external-tools';

void test('a PNG zbarimg reads back, and an SVG', async (t) => {
  const text = 'svc://pair?v=1&kind=phone&token=svcpt_abc';
  const png = await renderQr(text, 'png');
  assert.equal(png.contentType, 'image/png');
  const dir = mkdtempSync(join(tmpdir(), 'svc-qr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'q.png'), png.body);
  assert.equal((await runToolOk('zbarimg', ['--raw', '-q', join(dir, 'q.png')])).stdout.trim(), text);
  const svg = await renderQr(text, 'svg');
  assert.equal(svg.contentType, 'image/svg+xml');
  assert.match(String(svg.body), /^<svg /);
});
