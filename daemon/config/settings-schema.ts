// settings.json in $SVC_HOME: the one source of configuration truth (STYLE.md 8). Defaults and
// descriptions live here; docs/configuration.md is written from the same facts. Unknown keys are
// refused so a typo is reported instead of silently ignored. Every key here is read by the brain
// (test/daemon/config/settings-schema.test.ts); sections the spec names for features this version
// does not have are refused with their own message (unsupported-settings.ts).
import { Type, type Static, type TBoolean, type TObject, type TProperties } from '@sinclair/typebox';
import { PROVIDER_ID_PATTERN } from '../../protocol/providers';

const section = <T extends TProperties>(properties: T, description: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, default: {}, description });

const Bool = (d: boolean, description: string): TBoolean => Type.Boolean({ default: d, description });

const Ms = (d: number, description: string) => Type.Integer({ minimum: 0, default: d, description });

const ProviderEntry = Type.Object(
  {
    id: Type.String({ pattern: PROVIDER_ID_PATTERN, description: 'Stable id: metrics label, vault key prefix, CLI argument' }),
    kind: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('local')], { description: 'openai also covers Ollama, llama.cpp, vLLM, LM Studio' }),
    base_url: Type.Optional(Type.String({ description: 'API base URL, e.g. http://127.0.0.1:11434/v1 for Ollama' })),
    model: Type.Optional(Type.String({ description: 'Default model (svc models pin overrides)' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, description: 'First-token timeout for this provider' })),
    keyless: Type.Optional(Type.Boolean({ description: 'The server needs no API key (a local Ollama or llama.cpp)' })),
  },
  { additionalProperties: false },
);
export type ProviderEntry = Static<typeof ProviderEntry>;

/** The settings format this build writes and reads; older files are raised by settings migrations (load-settings.ts). */
export const SETTINGS_VERSION = 1;

export const SettingsSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    version: Type.Integer({ minimum: 1, maximum: SETTINGS_VERSION, default: SETTINGS_VERSION, description: 'Format of this file; an older one is migrated when loaded (svc never rewrites settings.json)' }),
    server: section(
      {
        host: Type.String({ default: '127.0.0.1', description: 'Address to listen on (SVC_HOST overrides)' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 9090, description: 'TCP port (SVC_PORT overrides)' }),
        body_limit_bytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024, description: 'Largest accepted request body' }),
        shutdown_timeout_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000, description: 'Hard exit after this long on SIGTERM' }),
        request_timeout_ms: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000, description: 'A request (headers and body) must arrive within this; slower ones get 408 and are closed' }),
        headers_timeout_ms: Type.Integer({ minimum: 500, maximum: 120_000, default: 10_000, description: 'The request line and headers must arrive within this (at most request_timeout_ms)' }),
      },
      'HTTP/WebSocket server',
    ),
    log: section(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
          { default: 'info', description: 'pino log level (SVC_LOG_LEVEL overrides)' },
        ),
      },
      'Logging (JSON lines on stdout, for journald)',
    ),
    metrics: section(
      {
        endpoint: Bool(true, 'Serve /metrics and emit metrics (SVC_METRICS_ENDPOINT overrides)'),
        public: Bool(false, 'Serve /metrics to callers off loopback (SVC_METRICS_PUBLIC overrides)'),
      },
      'Prometheus metrics (spec 4.12)',
    ),
    storage: section(
      {
        synchronous: Type.Union([Type.Literal('FULL'), Type.Literal('NORMAL')], {
          default: 'FULL',
          description: 'SQLite synchronous pragma; FULL is what makes an acknowledged write survive power loss',
        }),
        group_commit: Bool(true, 'Commit writes that arrive in the same event-loop turn in one transaction'),
      },
      'Storage (docs/storage.md)',
    ),
    memory: section(
      {
        embeddings: section(
          {
            base_url: Type.Optional(Type.String({ description: 'OpenAI-compatible server with /v1/embeddings (OpenAI, Ollama http://127.0.0.1:11434/v1, llama.cpp); unset = lexical search only' })),
            model: Type.String({ default: 'nomic-embed-text', description: 'Embedding model name; changing it re-embeds every item in the background' }),
            api_key: Type.Optional(Type.String({ description: 'Name of the key in the vault namespace `providers` (never the key itself)' })),
            min_similarity: Type.Number({ minimum: 0, maximum: 0.99, default: 0.3, description: 'Cosine at which two texts count as unrelated for this model' }),
            query_timeout_ms: Type.Integer({ minimum: 20, maximum: 10_000, default: 300, description: 'Search answers lexically (degraded) when the query embedding takes longer' }),
          },
          'Vector similarity for hybrid search (docs/memory.md)',
        ),
        search: section(
          {
            relevance_floor: Type.Number({ minimum: 0, maximum: 1, default: 0.55, description: 'Share of the query (idf-weighted, fused with similarity) an item must answer to be returned at all' }),
            recency_weight: Type.Number({ minimum: 0, maximum: 0.5, default: 0.1, description: 'Share of relevance that favours recent items' }),
          },
          'Memory search ranking',
        ),
        decay: section(
          {
            enabled: Bool(true, 'Unrecalled memories lose ranking weight (never deleted)'),
            half_life_days: Type.Number({ minimum: 1, maximum: 36500, default: 90, description: 'Retention halves after this long without recall' }),
            rehearsal_factor: Type.Number({ minimum: 1, maximum: 10, default: 2, description: 'Each recall multiplies the half-life by this' }),
            weight: Type.Number({ minimum: 0, maximum: 1, default: 0.3, description: 'Largest share of relevance decay can take away' }),
          },
          'Forgetting curve defaults (svc memory decay --set overrides at run time)',
        ),
        working: section(
          {
            max_items: Type.Integer({ minimum: 1, maximum: 100_000, default: 256, description: 'Items per session' }),
            max_bytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 256 * 1024, description: 'Bytes per session' }),
          },
          'Working memory (per session, in RAM)',
        ),
      },
      'Memory (spec 1.3, docs/memory.md)',
    ),
    providers: section(
      {
        chain: Type.Array(ProviderEntry, {
          default: [{ id: 'local', kind: 'local' }],
          description: 'Ordered failover chain: the first provider that answers wins (docs/providers.md)',
        }),
        first_token_timeout_ms: Type.Integer({ minimum: 100, default: 30_000, description: 'Give up on a provider that has sent nothing for this long after the request' }),
        idle_timeout_ms: Type.Integer({ minimum: 100, default: 30_000, description: 'Give up on a stream that stalls this long between chunks' }),
        cooldown: section(
          {
            rate_limit_ms: Ms(60_000, 'Rate limit without Retry-After (a Retry-After header is honoured instead)'),
            overloaded_ms: Ms(30_000, 'Provider overloaded (529/503)'),
            timeout_ms: Ms(30_000, 'Provider timed out or stalled'),
            network_ms: Ms(15_000, 'Provider unreachable'),
            unknown_ms: Ms(30_000, 'Other server errors (5xx, 404)'),
            auth_ms: Ms(86_400_000, 'Key refused (401/403): disabled until `svc key recover` or this long'),
            billing_ms: Ms(86_400_000, 'Key out of credit (402, insufficient_quota): disabled until `svc key recover` or this long'),
            max_ms: Ms(3_600_000, 'Cap for repeated failures (each consecutive failure doubles the cooldown)'),
          },
          'Cooldowns per error class; bad requests and context overflows never cool down',
        ),
      },
      'LLM providers and their failover chain (spec 1.1, docs/providers.md)',
    ),
    agent: section(
      {
        max_tool_steps: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'Tool calls one turn may run at most; then the model must answer' }),
        history_messages: Type.Integer({ minimum: 0, maximum: 400, default: 20, description: 'Earlier messages of the session given to the model each turn' }),
        max_sessions: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000, description: 'Open sessions at most; one more ends the oldest session without clients or turns, or is refused (UNAVAILABLE) when there is none' }),
        max_sessions_per_connection: Type.Integer({ minimum: 1, maximum: 100_000, default: 16, description: 'Open sessions one WebSocket connection may have opened; more are refused (RATE_LIMITED)' }),
        max_sessions_per_principal: Type.Integer({ minimum: 1, maximum: 100_000, default: 500, description: 'Open sessions one principal (an API token) may hold; one more ends its own oldest session without clients or turns, or is refused (RATE_LIMITED)' }),
        session_memory_bytes: Type.Integer({
          minimum: 1024 * 1024,
          maximum: 4 * 1024 * 1024 * 1024,
          default: 32 * 1024 * 1024,
          description: 'Bytes of text all open sessions together hold (transcripts and working memory); past it sessions without clients end, oldest first, then the oldest conversation is compacted into episodes',
        }),
        session_transcript_bytes: Type.Integer({ minimum: 16 * 1024, maximum: 256 * 1024 * 1024, default: 512 * 1024, description: 'Bytes of conversation one session keeps in RAM; past it the oldest quarter is compacted into an episode' }),
        max_queued_turns: Type.Integer({ minimum: 1, maximum: 1000, default: 8, description: 'Turns waiting in one session at most; more get BUSY' }),
        session_idle_minutes: Type.Integer({ minimum: 1, maximum: 10_080, default: 30, description: 'A session with no client and no turn for this long ends (its episode is written)' }),
        router: section(
          {
            enabled: Bool(true, 'Route turns to specialists (health, home, research, creative, general)'),
            learn_from_corrections: Bool(true, 'Store routing corrections ("that was a home question") and use them next time'),
          },
          'Multi-agent router (spec 1.2, docs/agent.md)',
        ),
        websocket: section(
          {
            heartbeat_ms: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000, description: 'Ping interval on /v1/session; a peer silent for two intervals is dropped' }),
            max_buffered_bytes: Type.Integer({ minimum: 16 * 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024, description: 'Unsent bytes a slow client may accumulate before it is disconnected' }),
          },
          'WebSocket sessions (docs/protocol.md)',
        ),
      },
      'Agent turn loop and sessions (docs/agent.md)',
    ),
  },
  { additionalProperties: false },
);

export type Settings = Static<typeof SettingsSchema>;
