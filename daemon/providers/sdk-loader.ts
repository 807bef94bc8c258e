// The official LLM SDKs load on first use. They are most of the brain's code (1.2 MB of @anthropic-ai/sdk
// and 0.4 MB of openai before minifying) and a brain on the embedded local provider never calls them:
// loading them at start cost ~2.4 MiB of idle RSS on a Pi (bench/sections/startup.mjs). esbuild puts
// each in a chunk of its own (build.mjs, splitting).
import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';

let openai: Promise<typeof OpenAI> | undefined;
let anthropic: Promise<typeof Anthropic> | undefined;

/** A failed load is not cached, so the next call tries again. */
function once<T>(load: () => Promise<T>, forget: () => void): Promise<T> {
  return load().catch((err: unknown) => {
    forget();
    throw err;
  });
}

export const loadOpenAi = (): Promise<typeof OpenAI> =>
  (openai ??= once(
    () => import('openai').then((m) => m.default),
    () => (openai = undefined),
  ));

export const loadAnthropic = (): Promise<typeof Anthropic> =>
  (anthropic ??= once(
    () => import('@anthropic-ai/sdk').then((m) => m.default),
    () => (anthropic = undefined),
  ));

/**
 * An SDK client made on first use: the adapters and the embedder construct nothing at start. `sdk`
 * is the loaded SDK class (its error classes map failures) once a call has loaded it.
 */
export class LazyClient<Sdk, Client> {
  private made: { client: Client; sdk: Sdk } | undefined;

  constructor(
    private readonly load: () => Promise<Sdk>,
    private readonly make: (sdk: Sdk) => Client,
  ) {}

  get sdk(): Sdk | undefined {
    return this.made?.sdk;
  }

  async get(): Promise<{ client: Client; sdk: Sdk }> {
    if (this.made) return this.made;
    const sdk = await this.load();
    return (this.made = { client: this.make(sdk), sdk });
  }
}
