/**
 * What a mission's `env("NAME")` may read: the run's own `--env` values, and from the process
 * environment only `REQON_*` variables — never the rest of it (HOME, AWS_SECRET_ACCESS_KEY, a
 * CI's tokens…), which a mission has no business seeing and whose values would reach the log.
 * A `REQON_*` value whose name marks a credential (TOKEN, SECRET, PASSWORD, API_KEY…) is a
 * secret: the run's redactor must know it (`credentialEnvValues`).
 */
import { isSensitiveName } from './credential-names.js';

const VISIBLE_PREFIX = 'REQON_';

type Vars = Readonly<Record<string, string | undefined>>;

export function missionEnvVar(name: string, runEnv: Vars, processVars: Vars): string | undefined {
  if (Object.hasOwn(runEnv, name)) return runEnv[name];
  return name.startsWith(VISIBLE_PREFIX) ? processVars[name] : undefined;
}

/**
 * The `REQON_*` variables of `processVars`, non-empty. Names first, then only their values: on
 * `process.env` every value read is a lookup in the process's environment, and reading them all
 * (Object.entries) cost a run's start about three times as much (every run does this).
 */
function visibleVars(processVars: Vars): [string, string][] {
  const out: [string, string][] = [];
  for (const name of Object.keys(processVars)) {
    if (!name.startsWith(VISIBLE_PREFIX)) continue;
    const value = processVars[name];
    if (value) out.push([name, value]);
  }
  return out;
}

/** Every value `env()` could return (the run's settings, and `REQON_*` variables), non-empty. */
export function missionEnvValues(runEnv: Vars, processVars: Vars): string[] {
  const out = visibleVars(processVars).map(([, value]) => value);
  for (const value of Object.values(runEnv)) if (value) out.push(value);
  return out;
}

/** The values `env()` could return that are credentials, for the redactor. */
export function credentialEnvValues(runEnv: Vars, processVars: Vars, isCredential: (name: string) => boolean = isSensitiveName): string[] {
  const out: string[] = [];
  for (const [name, value] of [...visibleVars(processVars), ...Object.entries(runEnv)]) {
    if (value && isCredential(name)) out.push(value);
  }
  return out;
}

/**
 * The values of credential-named query parameters in the run's `--source` URLs
 * (`…/v1?api_key=…`): secrets the run was given as surely as `--auth` ones, so an answer that
 * echoes one (`"self": "/v1/items?api_key=…"`) is redacted in the log as theirs are (helper 75: it
 * was logged and exported in clear).
 */
export function credentialSourceValues(sources: Record<string, string>, isCredential: (name: string) => boolean = isSensitiveName): string[] {
  const out: string[] = [];
  for (const text of Object.values(sources)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      continue;
    }
    for (const [name, value] of url.searchParams) if (value && isCredential(name)) out.push(value);
  }
  return out;
}
