/**
 * The credentials a run was given, and how a later process recognises them.
 *
 * Every credential of the run — each entry of its --auth file, each declared source's
 * REQON_<SOURCE>_* variables — is a secret from its first request on (GUARANTEES 12). A run
 * records salted sha256 digests of them (never the values) in its `run.started`: an oauth2
 * refresh writes a new token over the old one in the --auth file, and a resume or verify would
 * otherwise no longer know the old one as a secret where the mission still reads it (`env("PAT")`
 * in a query), recording it in clear and taking the request for another. Values shorter than
 * MIN_SECRET_LENGTH get no digest: a digest of a short value could be reversed by trying them all.
 */
import { createHash } from 'node:crypto';
import type { CredentialDigests, StoredEvent } from '../log/events.js';
import { missionEnvValues } from '../env/mission-env.js';
import type { SourceDecl } from '../lang/ast.js';
import { discoverCredentials, secretsOf, type CredentialsMap } from './credentials.js';
import { MIN_SECRET_LENGTH } from './redact.js';

type Vars = Readonly<Record<string, string | undefined>>;

/** Every credential value the run was given, for any of `sources` or any entry of `file`. */
export function givenCredentials(sources: Iterable<SourceDecl>, file: CredentialsMap | undefined, vars: Vars): string[] {
  const out: string[] = [];
  for (const entry of Object.values(file ?? {})) out.push(...secretsOf(entry));
  for (const source of sources) {
    const declared = source.auth?.kind ?? 'none';
    if (declared === 'none') continue;
    try {
      out.push(...secretsOf(discoverCredentials(source.name.name, vars, declared)));
    } catch {
      // Incomplete variables: resolveCredentials says so when the source is first used.
    }
  }
  return out;
}

function digest(salt: string, value: string): string {
  return createHash('sha256').update(salt).update('\u0000').update(value).digest('hex');
}

/** Digests of `values` (those long enough to be told from data), under `salt`. */
export function digestCredentials(values: readonly string[], salt: string): CredentialDigests | undefined {
  const long = [...new Set(values.filter((v) => v.length >= MIN_SECRET_LENGTH))];
  return long.length === 0 ? undefined : { salt, sha256: long.map((v) => digest(salt, v)).sort() };
}

/** Of `candidates` (the values the mission can read), those a run's digests name. */
export function rememberedCredentials(digests: readonly CredentialDigests[] | undefined, candidates: readonly string[]): string[] {
  if (digests === undefined || digests.length === 0) return [];
  const out: string[] = [];
  for (const value of new Set(candidates)) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    if (digests.some((d) => d.sha256.includes(digest(d.salt, value)))) out.push(value);
  }
  return out;
}

/** Of the values the mission can read (the run's settings, `REQON_*` variables), those the digests of its `run.started` (`first`) name. */
export function rememberedCredentialsOfRun(first: StoredEvent | undefined, runEnv: Vars, vars: Vars): string[] {
  const digests = first?.type === 'run.started' ? (first as StoredEvent<'run.started'>).payload.credentials : undefined;
  return rememberedCredentials(digests, missionEnvValues(runEnv, vars));
}
