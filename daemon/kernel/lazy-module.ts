// Loading a heavy module on first use instead of at start. The LLM SDKs are most of the brain's code
// and a brain on the embedded local agent never calls them: loading them at start cost ~2.4 MiB of
// idle RSS on a Pi (bench/sections/startup.mjs). A capability passes `() => import('pkg')` here;
// esbuild then puts the package in a chunk of its own (build.mjs, splitting), read only when called.

/**
 * `load` run once, on the first call; later calls share its promise. A failed load is not kept, so
 * the next call tries again (a package being installed, a transient read error).
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

/**
 * A client made on first use from a lazily loaded SDK: its owner constructs nothing at start. `sdk`
 * is the loaded SDK (its error classes map failures) once a call has loaded it.
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
