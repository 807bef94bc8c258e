// A real HTTP server on loopback speaking the OpenAI /v1/embeddings wire format, with deterministic
// vectors (hashed bag of stemmed words, plus a small synonym table so "semantic" hits can be tested),
// and switches for the failure modes search must survive: slow, HTTP 500, closed port.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { contentWords } from '../../../daemon/kernel/text';
import { porterStem } from '../../../daemon/memory/porter-stemmer';

export const DIM = 64;
const SYNONYMS: Record<string, string> = { recip: 'goulash', choos: 'laptop', chose: 'laptop', automobil: 'skoda', car: 'skoda' };

export function hashedVector(text: string): number[] {
  const v = new Array<number>(DIM).fill(0);
  for (const w of contentWords(text)) {
    const s = porterStem(w);
    const key = SYNONYMS[s] ?? s;
    const h = createHash('sha1').update(key).digest();
    v[h[0]! % DIM]! += 1;
    v[h[1]! % DIM]! += 0.5;
  }
  return v;
}

export interface EmbeddingServer {
  url: string;
  mode: 'ok' | 'slow' | 'error';
  delayMs: number;
  requests: number;
  close(): Promise<void>;
}

export async function startEmbeddingServer(): Promise<EmbeddingServer> {
  const state = { mode: 'ok' as EmbeddingServer['mode'], delayMs: 2000, requests: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      state.requests++;
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      if (state.mode === 'error') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model not loaded', type: 'server_error' } }));
        return;
      }
      const parsed = JSON.parse(body) as { model: string; input: string | string[] };
      const inputs = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
      const payload = JSON.stringify({
        object: 'list',
        model: parsed.model,
        data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: hashedVector(t) })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
      const send = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(payload);
      if (state.mode === 'slow') setTimeout(send, state.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms) {
      state.delayMs = ms;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
