// Commands in the brain's store (spec 3.4; docs/hardware.md "Commands"): a row per command and a row per
// status change with its time. A command being worked on is also kept in memory, so its state machine
// (command-machine.ts) is checked synchronously and two racing changes (a node's answer and the brain
// stopping) cannot both land: the second sees the first's status and is refused. Each change is one
// write transaction; `transition` resolves once it is durable. Final commands beyond
// settings.commands.keep are pruned, oldest first.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CapabilityContext, Clock, Db, Migration } from '../../kernel/capability';
import type { CommandRecord, CommandStatus } from '../../../protocol/hardware';
import { TERMINAL_COMMAND_STATUSES } from '../../../protocol/hardware';
import { advance, isFinal, type CommandStep } from './command-machine';

export const COMMAND_MIGRATION: Migration = {
  version: 2,
  description: 'device commands and their status history',
  up: `CREATE TABLE hw_commands (
    command_id TEXT PRIMARY KEY,
    device_id TEXT NOT NULL,
    node_id TEXT NOT NULL,
    action TEXT NOT NULL,
    tool TEXT,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    verified INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    error TEXT,
    turn_id TEXT,
    approval_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
  );
  CREATE INDEX hw_commands_created ON hw_commands (created_at);
  CREATE INDEX hw_commands_device ON hw_commands (device_id, created_at);
  CREATE INDEX hw_commands_status ON hw_commands (status);
  CREATE TABLE hw_command_history (
    command_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    at REAL NOT NULL,
    detail TEXT,
    PRIMARY KEY (command_id, seq)
  );`,
};

/** A command as the runner works on it (times in epoch ms). */
export interface Command {
  readonly commandId: string;
  readonly deviceId: string;
  readonly nodeId: string;
  readonly action: string;
  readonly tool: string | null;
  readonly params: Record<string, unknown>;
  readonly turnId: string | null;
  readonly createdAt: number;
  status: CommandStatus;
  verified: boolean | null;
  attempts: number;
  result: Record<string, unknown> | null;
  error: string | null;
  approvalId: string | null;
  updatedAt: number;
  history: CommandStep[];
}

export interface NewCommand {
  deviceId: string;
  nodeId: string;
  action: string;
  tool: string | null;
  params: Record<string, unknown>;
  turnId: string | null;
  approvalId?: string | null;
}

/** Fields a change may set besides the status. */
export type CommandFields = Partial<Pick<Command, 'verified' | 'attempts' | 'result' | 'error' | 'approvalId'>>;

interface CommandRow {
  command_id: string;
  device_id: string;
  node_id: string;
  action: string;
  tool: string | null;
  params: string;
  status: CommandStatus;
  verified: number | null;
  attempts: number;
  result: string | null;
  error: string | null;
  turn_id: string | null;
  approval_id: string | null;
  created_at: number;
  updated_at: number;
}

type Store = CapabilityContext['store'];

const FINAL_LIST = TERMINAL_COMMAND_STATUSES.map((s) => `'${s}'`).join(', ');
const iso = (ms: number): string => new Date(ms).toISOString();

export class CommandStore {
  /** Commands not yet final, by id. */
  private readonly live = new Map<string, Command>();
  private finalCount = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly keep: number,
  ) {}

  /**
   * At start: commands a crash left `queued` or `sent` become failed "brain restarted"; those waiting
   * for confirmation are loaded (their approval may still come). Returns them.
   */
  async recover(): Promise<Command[]> {
    this.finalCount = this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM hw_commands WHERE status IN (${FINAL_LIST})`)?.n ?? 0;
    const rows = this.store.all<CommandRow>(`SELECT * FROM hw_commands WHERE status IN ('queued', 'sent', 'pending_confirmation')`);
    const waiting: Command[] = [];
    const failed: Promise<void>[] = [];
    for (const row of rows) {
      const command = this.fromRow(row);
      this.live.set(command.commandId, command);
      if (command.status === 'pending_confirmation') waiting.push(command);
      else failed.push(this.transition(command, 'failed', 'brain restarted', { error: 'brain restarted' }));
    }
    await Promise.all(failed);
    await this.prune();
    return waiting;
  }

  /** A new command in `status` (queued, or pending_confirmation for a call approvals holds), written at once. */
  create(init: NewCommand, status: 'queued' | 'pending_confirmation', detail: string | null): { command: Command; written: Promise<void> } {
    const now = this.clock.now();
    let history = advance('', [], 'queued', now, status === 'queued' ? detail : null);
    if (status === 'pending_confirmation') history = advance('', history, status, now, detail);
    const command: Command = {
      commandId: `cmd_${randomBytes(9).toString('hex')}`,
      ...init,
      approvalId: init.approvalId ?? null,
      createdAt: now,
      status,
      verified: null,
      attempts: 0,
      result: null,
      error: null,
      updatedAt: now,
      history,
    };
    this.live.set(command.commandId, command);
    const written = this.write((db) => {
      db.run(
        `INSERT INTO hw_commands (command_id, device_id, node_id, action, tool, params, status, verified, attempts, result, error, turn_id, approval_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0, NULL, NULL, ?, ?, ?, ?)`,
        [command.commandId, command.deviceId, command.nodeId, command.action, command.tool, JSON.stringify(command.params), status, command.turnId, command.approvalId, now, now],
      );
      history.forEach((step, seq) => db.run('INSERT INTO hw_command_history (command_id, seq, status, at, detail) VALUES (?, ?, ?, ?, ?)', [command.commandId, seq, step.status, step.at, step.detail]));
    }, command);
    return { command, written };
  }

  /**
   * Moves a command to `to` (CommandTransitionError, synchronously, when the machine refuses it) and
   * writes the change; resolves once it is durable.
   */
  transition(command: Command, to: CommandStatus, detail: string | null, set: CommandFields = {}): Promise<void> {
    const history = advance(command.commandId, command.history, to, this.clock.now(), detail);
    const step = history[history.length - 1]!;
    Object.assign(command, set, { status: to, history, updatedAt: step.at });
    const seq = history.length - 1;
    if (isFinal(to)) {
      this.live.delete(command.commandId);
      this.finalCount++;
    }
    return this.write((db) => {
      db.run('UPDATE hw_commands SET status = ?, verified = ?, attempts = ?, result = ?, error = ?, approval_id = ?, updated_at = ? WHERE command_id = ?', [
        to,
        command.verified === null ? null : command.verified ? 1 : 0,
        command.attempts,
        command.result === null ? null : JSON.stringify(command.result),
        command.error,
        command.approvalId,
        step.at,
        command.commandId,
      ]);
      db.run('INSERT INTO hw_command_history (command_id, seq, status, at, detail) VALUES (?, ?, ?, ?, ?)', [command.commandId, seq, to, step.at, detail]);
    }, command).then(() => (isFinal(to) && this.finalCount > this.keep ? this.prune() : undefined));
  }

  /** A command being worked on (not final), by id. */
  liveCommand(commandId: string): Command | undefined {
    return this.live.get(commandId);
  }

  get(commandId: string): CommandRecord | undefined {
    const live = this.live.get(commandId);
    if (live) return this.record(live);
    const row = this.store.get<CommandRow>('SELECT * FROM hw_commands WHERE command_id = ?', [commandId]);
    return row ? this.record(this.fromRow(row)) : undefined;
  }

  /** The newest commands first, optionally of one device and/or in one status. */
  recent(filter: { limit: number; device?: string; status?: CommandStatus }): CommandRecord[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.device !== undefined) {
      where.push('device_id = ?');
      params.push(filter.device);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    const sql = `SELECT * FROM hw_commands ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    return this.store.all<CommandRow>(sql, [...params, filter.limit]).map((row) => this.record(this.live.get(row.command_id) ?? this.fromRow(row)));
  }

  /** Deletes the oldest final commands beyond `keep`, with their history. */
  async prune(): Promise<void> {
    const excess = this.finalCount - this.keep;
    if (excess <= 0) return;
    this.finalCount -= excess;
    const removed = await this.store.write((db) => {
      const ids = db.all<{ command_id: string }>(`SELECT command_id FROM hw_commands WHERE status IN (${FINAL_LIST}) ORDER BY created_at, rowid LIMIT ?`, [excess]);
      for (const { command_id: id } of ids) {
        db.run('DELETE FROM hw_command_history WHERE command_id = ?', [id]);
        db.run('DELETE FROM hw_commands WHERE command_id = ?', [id]);
      }
      return ids.length;
    });
    this.logger.debug({ removed }, 'pruned old commands');
  }

  private write(fn: (db: Db) => void, command: Command): Promise<void> {
    return this.store.write(fn).catch((err: unknown) => {
      // The command goes on in memory; the log says which change is missing from the store.
      this.logger.error({ err, command_id: command.commandId, status: command.status }, 'could not store a command change');
    });
  }

  private fromRow(row: CommandRow): Command {
    const history = this.store
      .all<{ status: CommandStatus; at: number; detail: string | null }>('SELECT status, at, detail FROM hw_command_history WHERE command_id = ? ORDER BY seq', [row.command_id])
      .map((h) => ({ status: h.status, at: h.at, detail: h.detail }));
    return {
      commandId: row.command_id,
      deviceId: row.device_id,
      nodeId: row.node_id,
      action: row.action,
      tool: row.tool,
      params: JSON.parse(row.params) as Record<string, unknown>,
      turnId: row.turn_id,
      createdAt: row.created_at,
      status: row.status,
      verified: row.verified === null ? null : row.verified === 1,
      attempts: row.attempts,
      result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
      error: row.error,
      approvalId: row.approval_id,
      updatedAt: row.updated_at,
      history,
    };
  }

  private record(c: Command): CommandRecord {
    return {
      command_id: c.commandId,
      device_id: c.deviceId,
      node_id: c.nodeId,
      action: c.action,
      tool: c.tool,
      params: c.params,
      status: c.status,
      verified: c.verified,
      attempts: c.attempts,
      result: c.result,
      error: c.error,
      turn_id: c.turnId,
      approval_id: c.approvalId,
      created_at: iso(c.createdAt),
      updated_at: iso(c.updatedAt),
      history: c.history.map((h) => ({ status: h.status, at: iso(h.at), detail: h.detail })),
    };
  }
}
