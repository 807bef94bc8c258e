// Settings sections and environment variables the spec names for features this version of svc does
// not have. Accepting one and ignoring it would promise a behaviour that never happens, so each is
// refused at load (exit 78, like any other configuration error) with a message naming what is
// missing. A feature that arrives moves its section into settings-schema.ts and its variables into
// ENVIRONMENT_VARIABLES, and drops them from here.

const WEBHOOKS = 'webhook intake';
const UPDATE = 'scheduled release checks';
const PUSH = 'push notifications';

/** settings.json top-level section → the feature it would configure. */
export const UNSUPPORTED_SECTIONS: Readonly<Record<string, string>> = { webhooks: WEBHOOKS, update: UPDATE, channels: PUSH };

/** Environment variable → the feature it would configure. */
export const UNSUPPORTED_VARIABLES: Readonly<Record<string, string>> = {
  SVC_WEBHOOK_ALLOWED_IPS: WEBHOOKS,
  SVC_UPDATE_CHECK: UPDATE,
  SVC_ANDROID_SERVICE_ACCOUNT_PATH: PUSH,
  SVC_IOS_KEY_PATH: PUSH,
  SVC_IOS_KEY_ID: PUSH,
  SVC_IOS_TEAM_ID: PUSH,
  SVC_IOS_BUNDLE_ID: PUSH,
  SVC_IOS_ENVIRONMENT: PUSH,
};

/** One problem per unsupported top-level key of a settings object, as `/<key>: <why>`. */
export function unsupportedSectionProblems(raw: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(raw)
    .filter((key) => Object.hasOwn(UNSUPPORTED_SECTIONS, key))
    .map((key) => `/${key}: this version of svc has no ${UNSUPPORTED_SECTIONS[key]}; remove the section`);
}

/** One message per unsupported variable that is set to a non-empty value (empty counts as unset, as for every variable). */
export function unsupportedVariableProblems(env: Readonly<Partial<Record<string, string | undefined>>>): string[] {
  return Object.keys(UNSUPPORTED_VARIABLES)
    .filter((name) => (env[name] ?? '').trim() !== '')
    .map((name) => `${name} is set, but this version of svc has no ${UNSUPPORTED_VARIABLES[name]}; unset it`);
}
