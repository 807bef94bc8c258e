// The pair URL as a QR image (GET /api/devices/pair/qr): PNG by default, SVG on request. The `qrcode`
// package is loaded on the first request, not at start (daemon/kernel/lazy-module.ts): most brains
// render a QR code a handful of times in their life.
import type * as QrCodeModule from 'qrcode';
import { lazyModule } from '../kernel/lazy-module';

// qrcode is CommonJS: bundled by esbuild, import() gives its exports as `default`; under node they are also named.
type QrCode = typeof QrCodeModule;
const qrcode = lazyModule(async (): Promise<QrCode> => {
  const mod = (await import('qrcode')) as QrCode & { default?: QrCode };
  return mod.default ?? mod;
});

export type QrFormat = 'png' | 'svg';

/** Error correction M (15%) and a quiet zone of 4 modules: what phone cameras read off a screen best. */
const OPTIONS = { errorCorrectionLevel: 'M', margin: 4 } as const;

export async function renderQr(text: string, format: QrFormat): Promise<{ body: Buffer | string; contentType: string }> {
  const qr = await qrcode();
  if (format === 'svg') return { body: await qr.toString(text, { ...OPTIONS, type: 'svg' }), contentType: 'image/svg+xml' };
  return { body: await qr.toBuffer(text, { ...OPTIONS, type: 'png', scale: 6 }), contentType: 'image/png' };
}
