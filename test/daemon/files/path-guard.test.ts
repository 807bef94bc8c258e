// The security core of the file tools: a path is allowed iff its realpath (after folding `.`/`..` as
// text and following every symlink) is a regular file or directory inside an active grant with the
// needed mode. The property test builds a real tree in a temp dir (a write grant, a read grant, an
// ungranted folder, a FIFO) with generated symlinks pointing inside, outside, to each other and
// nowhere, and checks generated relative paths against a model that resolves them on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import fc from 'fast-check';
import type { GrantMode } from '../../../protocol/files';
import type { ActiveGrant } from '../../../daemon/files/grants';
import { isInside, resolveGranted } from '../../../daemon/files/path-guard';

const DIRS = ['in', 'in/a', 'in/a/b', 'ro', 'out', 'out/c'];
const FILES = ['in/f', 'in/a/g', 'ro/h', 'out/secret'];
const FIFO = 'in/pipe';
const LINKS = ['in/l0', 'in/l1', 'in/a/l2', 'ro/l3'];
const TARGETS = [...DIRS, ...FILES, FIFO, ...LINKS, 'in/nowhere', '/etc'];
const SEGMENTS = ['in', 'ro', 'out', 'a', 'b', 'c', 'f', 'g', 'h', 'secret', 'pipe', 'l0', 'l1', 'l2', 'l3', '..', '.', 'x'];

function tree(t: { after(fn: () => void): void }): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'svc-guard-')));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const d of DIRS) mkdirSync(join(root, d));
  for (const f of FILES) writeFileSync(join(root, f), f);
  execFileSync('mkfifo', [join(root, FIFO)]);
  return root;
}

const grantsOf = (root: string): ActiveGrant[] => [
  { path: join(root, 'in'), mode: 'write', expiresAt: null },
  { path: join(root, 'ro'), mode: 'read', expiresAt: null },
];

type ModelNode = { kind: 'directory' | 'file' | 'fifo' | 'external'; real: string } | undefined;

/** Resolves a root-relative path in the model: text folding first, then links one component at a time. */
function modelResolve(rel: string, links: ReadonlyMap<string, string>): ModelNode {
  const normal = posix.normalize(rel);
  if (normal === '..' || normal.startsWith('../')) return { kind: 'external', real: normal };
  const kindOf = (p: string): ModelNode => {
    if (p === '' || p === '.' || DIRS.includes(p)) return { kind: 'directory', real: p };
    if (FILES.includes(p)) return { kind: 'file', real: p };
    if (p === FIFO) return { kind: 'fifo', real: p };
    if (p.startsWith('/')) return { kind: 'external', real: p };
    return undefined;
  };
  const follow = (p: string): ModelNode => {
    let node = p;
    for (let hops = 0; links.has(node); hops++) {
      if (hops > 40) return undefined; // a cycle: ELOOP
      node = links.get(node)!;
    }
    return kindOf(node);
  };
  let cur: ModelNode = { kind: 'directory', real: '' };
  for (const seg of normal === '.' ? [] : normal.split('/')) {
    if (cur?.kind === 'external') return cur;
    if (cur?.kind !== 'directory') return undefined;
    cur = follow(cur.real === '' ? seg : `${cur.real}/${seg}`);
  }
  return cur;
}

function expected(node: ModelNode, mode: GrantMode): boolean {
  if (!node || (node.kind !== 'file' && node.kind !== 'directory')) return false;
  return isInside(node.real, 'in') || (mode === 'read' && isInside(node.real, 'ro'));
}

void test('property: allowed iff the realpath is a regular file or directory inside a grant with the mode', (t) => {
  const root = tree(t);
  const grants = grantsOf(root);
  const segments = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((s) => s.join('/'));
  // Half the paths start at a node of the tree, so links, the FIFO and grant edges are hit often.
  const fromNode = fc.tuple(fc.constantFrom(...DIRS, ...FILES, FIFO, ...LINKS), fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 3 })).map(([n, s]) => [n, ...s].join('/'));
  const relPath = fc.oneof(segments, fromNode);
  const scenario = fc.record({
    targets: fc.tuple(...LINKS.map(() => fc.constantFrom(...TARGETS))),
    paths: fc.array(fc.tuple(relPath, fc.constantFrom<GrantMode>('read', 'write')), { minLength: 1, maxLength: 25 }),
  });
  fc.assert(
    fc.property(scenario, ({ targets, paths }) => {
      const links = new Map(LINKS.map((l, i) => [l, targets[i]!]));
      for (const [link, target] of links) {
        rmSync(join(root, link), { force: true });
        symlinkSync(target.startsWith('/') ? target : join(root, target), join(root, link));
      }
      for (const [rel, mode] of paths) {
        const node = modelResolve(rel, links);
        const got = resolveGranted(`${root}/${rel}`, grants, mode);
        assert.equal(got.ok, expected(node, mode), `${rel} (${mode}) with links ${JSON.stringify([...links])}: ${got.ok ? got.path.real : got.reason}`);
        if (got.ok) {
          assert.equal(got.path.real, node!.real === '' ? root : join(root, node!.real));
          assert.equal(got.path.kind, node!.kind);
        }
      }
    }),
    { numRuns: 150 },
  );
});

void test('refusals name their reason', (t) => {
  const root = tree(t);
  const grants = grantsOf(root);
  symlinkSync(join(root, 'out/secret'), join(root, 'in/leak'));
  symlinkSync(join(root, 'in/gone'), join(root, 'in/dangling'));
  const cases: Array<[string, GrantMode, RegExp]> = [
    ['in/f', 'read', /not an absolute path/],
    [`${root}/in/../out/secret`, 'read', /outside every granted folder/],
    [`${root}/in/leak`, 'read', /outside every granted folder \(it resolves to .*out\/secret\)/],
    [`${root}/in/dangling`, 'read', /symbolic link whose target does not exist/],
    [`${root}/in/pipe`, 'read', /FIFOs/],
    [`${root}/ro/h`, 'write', /granted read-only/],
    [`${root}/in/missing`, 'read', /does not exist/],
    ['/dev/null', 'read', /device files/],
    [`${root}/in/f\0`, 'read', /NUL/],
  ];
  for (const [path, mode, why] of cases) {
    const r = resolveGranted(path, grants, mode);
    assert.equal(r.ok, false, path);
    if (!r.ok) assert.match(r.reason, why, path);
  }
  assert.equal(resolveGranted('/dev/null', [{ path: '/dev', mode: 'read', expiresAt: null }], 'read').ok, false, 'a device file is refused even inside a grant');
});

void test('a socket is refused inside a grant', async (t) => {
  const root = tree(t);
  const server = createServer();
  const sock = join(root, 'in/sock');
  await new Promise<void>((ok) => server.listen(sock, ok));
  t.after(() => server.close());
  const r = resolveGranted(sock, grantsOf(root), 'read');
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.reason, /sockets/);
});

void test('a missing path may be created when its folder resolves inside a write grant', (t) => {
  const root = tree(t);
  const grants = grantsOf(root);
  symlinkSync(join(root, 'out'), join(root, 'in/outdir'));
  const fresh = resolveGranted(`${root}/in/a/new.txt`, grants, 'write', { mayBeMissing: true });
  assert.deepEqual(fresh.ok && { real: fresh.path.real, kind: fresh.path.kind }, { real: join(root, 'in/a/new.txt'), kind: null });
  const escaped = resolveGranted(`${root}/in/outdir/new.txt`, grants, 'write', { mayBeMissing: true });
  assert.equal(escaped.ok, false, 'a new file under a link to an ungranted folder');
  const noFolder = resolveGranted(`${root}/in/nope/new.txt`, grants, 'write', { mayBeMissing: true });
  assert.equal(!noFolder.ok && /folder does not exist/.test(noFolder.reason), true);
  unlinkSync(join(root, 'in/outdir'));
});

void test('containment is by whole path components, and a grant of / covers everything', () => {
  const docs: ActiveGrant = { path: '/srv/docs', mode: 'read', expiresAt: null };
  assert.equal(isInside('/srv/docs', docs.path), true);
  assert.equal(isInside('/srv/docs/a', docs.path), true);
  assert.equal(isInside('/srv/docs-private/a', docs.path), false, 'a sibling sharing the prefix');
  assert.equal(isInside('/srv', docs.path), false);
  assert.equal(isInside('/anything/at/all', '/'), true);
  assert.equal(resolveGranted('/etc', [{ path: '/', mode: 'read', expiresAt: null }], 'read').ok, true);
});
