// lazyModule and LazyClient: a module loaded once, on first use; a failed load is tried again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LazyClient, lazyModule } from '../../../daemon/kernel/lazy-module';

void test('nothing is loaded until the first call; calls at once share one load', async () => {
  let loads = 0;
  const load = lazyModule(async () => {
    loads++;
    await Promise.resolve();
    return { name: 'sdk' };
  });
  assert.equal(loads, 0);
  const [a, b] = await Promise.all([load(), load()]);
  assert.equal(loads, 1);
  assert.equal(a, b);
  assert.equal(await load(), a);
  assert.equal(loads, 1);
});

void test('a failed load is not kept: the caller sees the error and the next call loads again', async () => {
  let loads = 0;
  const load = lazyModule(() => (++loads === 1 ? Promise.reject(new Error('not installed yet')) : Promise.resolve(loads)));
  await assert.rejects(load(), /not installed yet/);
  assert.equal(await load(), 2);
  assert.equal(await load(), 2);
  assert.equal(loads, 2);
});

void test('a real package loads through import() on first use', async () => {
  const load = lazyModule(() => import('fast-check').then((m) => m.default));
  const fc = await load();
  assert.equal(typeof fc.assert, 'function');
});

void test('LazyClient makes its client once, on the first get(); sdk is known only after it', async () => {
  const made: string[] = [];
  class Sdk {
    constructor(readonly url: string) {
      made.push(url);
    }
  }
  const client = new LazyClient(lazyModule(() => Promise.resolve(Sdk)), (S) => new S('http://127.0.0.1:1'));
  assert.equal(client.sdk, undefined);
  assert.deepEqual(made, []);
  const first = await client.get();
  const second = await client.get();
  assert.equal(first.client, second.client);
  assert.equal(client.sdk, Sdk);
  assert.deepEqual(made, ['http://127.0.0.1:1']);
});

void test('LazyClient: a failed load leaves no client, and the next get() tries again', async () => {
  let attempts = 0;
  const client = new LazyClient(
    lazyModule(() => (++attempts === 1 ? Promise.reject(new Error('load failed')) : Promise.resolve('sdk'))),
    (sdk) => `${sdk}-client`,
  );
  await assert.rejects(client.get(), /load failed/);
  assert.equal(client.sdk, undefined);
  assert.deepEqual(await client.get(), { client: 'sdk-client', sdk: 'sdk' });
});
