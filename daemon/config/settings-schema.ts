// settings.json in $SVC_HOME: the one source of configuration truth (STYLE.md 8). Defaults and
// descriptions live here; docs/configuration.md is written from the same facts. Unknown keys are
// refused so a typo is reported instead of silently ignored.
import { Type, type Static, type TBoolean, type TObject, type TProperties } from '@sinclair/typebox';

const section = <T extends TProperties>(properties: T, description: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, default: {}, description });

const Bool = (d: boolean, description: string): TBoolean => Type.Boolean({ default: d, description });

export const SettingsSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    server: section(
      {
        host: Type.String({ default: '127.0.0.1', description: 'Address to listen on (SVC_HOST overrides)' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 9090, description: 'TCP port (SVC_PORT overrides)' }),
        body_limit_bytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024, description: 'Largest accepted request body' }),
        shutdown_timeout_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000, description: 'Hard exit after this long on SIGTERM' }),
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
    sync: section({ disabled: Bool(false, 'Intentionally single-node (SVC_SYNC_DISABLED=1)') }, 'Federated memory sync'),
    webhooks: section(
      {
        allowed_ips: Type.Array(Type.String(), { default: [], description: 'IP allowlist for webhook callers, CIDR or address (SVC_WEBHOOK_ALLOWED_IPS)' }),
        rate_per_minute: Type.Integer({ minimum: 1, default: 60, description: 'Deliveries per minute per webhook' }),
      },
      'Webhook intake',
    ),
    hardware: section({ generic_skills: Bool(true, 'Generate LLM tools from device manifests (SVC_GENERIC_HARDWARE_SKILLS)') }, 'Hardware'),
    update: section({ check: Bool(false, 'Scheduled release checks (SVC_UPDATE_CHECK)') }, 'Updates'),
    channels: section(
      {
        push: section(
          {
            android: section(
              {
                enabled: Bool(false, 'Send push notifications to Android devices'),
                service_account_path: Type.Optional(Type.String({ description: 'Service-account JSON (SVC_ANDROID_SERVICE_ACCOUNT_PATH)' })),
              },
              'Android push',
            ),
            ios: section(
              {
                enabled: Bool(false, 'Send push notifications to iOS devices'),
                key_path: Type.Optional(Type.String({ description: 'APNs .p8 key (SVC_IOS_KEY_PATH)' })),
                key_id: Type.Optional(Type.String({ description: 'SVC_IOS_KEY_ID' })),
                team_id: Type.Optional(Type.String({ description: 'SVC_IOS_TEAM_ID' })),
                bundle_id: Type.Optional(Type.String({ description: 'SVC_IOS_BUNDLE_ID' })),
                environment: Type.Union([Type.Literal('production'), Type.Literal('sandbox')], {
                  default: 'production',
                  description: 'SVC_IOS_ENVIRONMENT',
                }),
              },
              'iOS push',
            ),
          },
          'Push notifications (spec 4.9)',
        ),
      },
      'Channels',
    ),
  },
  { additionalProperties: false },
);

export type Settings = Static<typeof SettingsSchema>;
