// `node-agent pair` (docs/node-agent.md): find the brain, show a 6-digit code and the command that
// claims it, wait for the claim, keep the node key. stdout carries what the person acts on (the code,
// the claim command, the result); stderr carries notes while waiting. Exit codes: 0 paired, 1 not
// paired (expired, timed out, refused, no brain), 2 usage.
import type { PairCode } from '../mesh/pair-code';
import { displayPairCode } from '../mesh/pair-code';
import { locateBrain, NoBrainError, type LocatedBrain, type LocateInput } from './brain-locator';
import { checkNodeId, type PairOptions } from './command-line';
import { pairByCode, type ClientDeps } from './code-pairing-client';
import { readNodeKey, writeNodeKey } from '../mesh/node-key-store';

export const EXIT_PAIRED = 0;
export const EXIT_NOT_PAIRED = 1;
export const EXIT_USAGE = 2;

export interface Io {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
}

export interface PairContext extends ClientDeps {
  io: Io;
  /** $SVC_BRAIN_URL. */
  envBrain: string | undefined;
  /** The key directory when --key-dir is not given ($SVC_NODE_KEY_DIR or ~/.config/svc-node/keys). */
  defaultKeyDir: string;
  /** The node id when --node-id is not given (the host name). */
  hostname: string;
  discover: LocateInput['discover'];
}

export async function pairCommand(options: PairOptions, ctx: PairContext): Promise<number> {
  const { io } = ctx;
  const nodeId = options.nodeId ?? ctx.hostname;
  const bad = checkNodeId(nodeId);
  if (bad !== undefined) {
    io.err.write(`node-agent: the host name cannot be the node id: ${bad}; give --node-id\n`);
    return EXIT_USAGE;
  }
  const keyDir = options.keyDir ?? ctx.defaultKeyDir;
  let brain: LocatedBrain;
  try {
    brain = await locateBrain({ flag: options.brain, env: ctx.envBrain, discover: ctx.discover });
  } catch (err) {
    if (!(err instanceof NoBrainError)) throw err;
    io.err.write(`node-agent: ${err.message}\n`);
    return EXIT_NOT_PAIRED;
  }
  io.err.write(`node-agent: pairing node "${nodeId}" with the brain at ${brain.url} (${brain.via}${brain.name !== undefined ? `: ${brain.name}` : ''})\n`);
  if ((await readNodeKey(keyDir, nodeId)) !== null) io.err.write(`node-agent: this node already has a key in ${keyDir}; pairing again replaces it\n`);

  const outcome = await pairByCode(ctx, {
    brainUrl: brain.url,
    nodeId,
    name: options.name,
    deadline: ctx.now() + options.timeoutSeconds * 1000,
    onCode: (code: PairCode, expiresAt: number) => {
      io.out.write(`Pairing code: ${displayPairCode(code)}\n`);
      io.out.write(`Claim it on the brain: svc pair code ${code}\n`);
      io.err.write(`node-agent: the code is valid until ${new Date(expiresAt * 1000).toISOString().replace(/\.\d+Z$/, 'Z')}; waiting for the claim\n`);
    },
    onNote: (message) => io.err.write(`node-agent: ${message}\n`),
  });
  switch (outcome.status) {
    case 'paired': {
      const path = await writeNodeKey(keyDir, nodeId, outcome.token);
      io.out.write(`Paired as ${outcome.deviceId ?? 'a node'}; node key saved to ${path}\n`);
      return EXIT_PAIRED;
    }
    case 'expired':
      io.err.write(`node-agent: the code ${displayPairCode(outcome.code)} expired before it was claimed; run \`node-agent pair\` for a new one\n`);
      return EXIT_NOT_PAIRED;
    case 'timeout':
      io.err.write(`node-agent: not paired within ${options.timeoutSeconds} s${outcome.code !== undefined ? ` (nobody claimed ${displayPairCode(outcome.code)})` : ''}; run \`node-agent pair\` again\n`);
      return EXIT_NOT_PAIRED;
    case 'failed':
      io.err.write(`node-agent: ${outcome.message}\n`);
      return EXIT_NOT_PAIRED;
  }
}
