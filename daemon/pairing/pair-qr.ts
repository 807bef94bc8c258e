// The pair URL as a QR image (GET /api/devices/pair/qr): PNG by default, SVG on request. The `qrcode`
// package is loaded on the first request, not at start (daemon/kernel/lazy-module.ts): most brains
// render a QR code a handful of times in their life.
import { lazyModule } from '../kernel/lazy-module';

const qrcode = lazyModule(() => import('qrcode'));

export type QrFormat = 'png' | 'svg';

/** Error correction M (15%) and a quiet zone of 4 modules: what phone cameras read off a screen best. */
const OPTIONS = { errorCorrectionLevel: 'M', margin: 4 } as const;

export async function renderQr(text: string, format: QrFormat): Promise<{ body: Buffer | string; contentType: string }> {
  const qr = await qrcode();
  if (format === 'svg') return { body: await qr.toString(text, { ...OPTIONS, type: 'svg' }), contentType: 'image/svg+xml' };
  return { body: await qr.toBuffer(text, { ...OPTIONS, type: 'png', scale: 6 }), contentType: 'image/png' };
}
