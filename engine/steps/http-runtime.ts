/**
 * Per-run HTTP state: one auth session, rate limiter and circuit breaker per source (they live
 * for the process, not in the log: they shape timing, never results), the effective base URL of
 * each source (`--source NAME=URL` wins), loaded OpenAPI documents, and the redactor that keeps
 * every secret of the run out of the log.
 */
import { resolve } from 'node:path';
import type { Env } from '../env/env.js';
import { credentialNamesOf, type CredentialNameRule } from '../env/credential-names.js';
import { LOG_FORMAT } from '../log/events.js';
import type { LastCheckpoint } from '../log/log.js';
import type { SourceDecl } from '../lang/ast.js';
import { AuthSession, type TokenKeeper } from '../http/auth.js';
import { CircuitBreaker } from '../http/circuit-breaker.js';
import { resolveCredentials, shortSecretWarning, type CredentialsMap } from '../http/credentials.js';
import { givenCredentials } from '../http/given-credentials.js';
import { loadOpenApi, parseOpenApi, specFile, type OpenApiSpec } from '../http/openapi.js';
import { RateLimiter } from '../http/rate-limiter.js';
import { createRedactor, type Redactor } from '../http/redact.js';
import type { MissionModel } from './mission-model.js';
import { StepError } from './signals.js';
import { TokenKeeperOfFile, TokenKeeperOfVariables } from './token-keeper.js';

export interface HttpRuntimeOptions {
  /** `--source NAME=URL` overrides. */
  sources: Record<string, string>;
  credentials?: CredentialsMap;
  credentialsFile?: string;
  /** The --auth file could not be read (a schedule's run, execute.ts): a source that declares auth fails its requests with it. */
  credentialsError?: Error;
  /** Values the mission can read that are credentials by their names (`env("REQON_…_TOKEN")`): redacted too. */
  extraSecrets?: readonly string[];
  /**
   * Values the mission can read that were credentials the run was given, as the digests of its
   * `run.started` name them (http/given-credentials.ts): redacted too, from log format 5 on.
   */
  rememberedCredentials?: readonly string[];
  progress: (line: string) => void;
  /**
   * The log format the run records in (its `run.started`'s): a run recorded by an older engine
   * keeps the behaviours its log was made with (which names are credentials, what a 204 to a
   * since fetch is), or its replay diverges. This engine's own format when absent.
   */
  logFormat?: number;
}

export class HttpRuntime {
  readonly limiter: RateLimiter;
  readonly breaker: CircuitBreaker;
  readonly redactor: Redactor;
  /**
   * The redactor as it was before log format 5: it knew a source's credentials only once that
   * source's first request was being sent, so that request's identity (computed before) could
   * hold a credential the mission put in a value of no credential name. Used only to recognise
   * such identities in logs of those formats (fetch-step.ts); nothing is recorded through it.
   */
  readonly redactorBefore5: Redactor;
  /** The run's log format (HttpRuntimeOptions.logFormat) and the credential-name rule it records by. */
  readonly logFormat: number;
  readonly credentialNames: CredentialNameRule;
  private readonly sessions = new Map<string, AuthSession>();
  private readonly specs = new Map<string, OpenApiSpec>();

  constructor(
    private readonly model: MissionModel,
    private readonly env: Env,
    private readonly options: HttpRuntimeOptions,
  ) {
    this.limiter = new RateLimiter(env.clock);
    this.breaker = new CircuitBreaker(env.clock);
    this.logFormat = options.logFormat ?? LOG_FORMAT;
    this.credentialNames = credentialNamesOf(this.logFormat);
    const given = [...(options.extraSecrets ?? []), ...(options.rememberedCredentials ?? []), ...givenCredentials(model.sources.values(), options.credentials, env.vars)];
    // Asked twice per request: a plain loop, not spread + flatMap (several times cheaper).
    const withSessions = (known: readonly string[]) => () => {
      const secrets: string[] = [...known];
      for (const session of this.sessions.values()) for (const secret of session.secrets()) secrets.push(secret);
      return secrets;
    };
    this.redactor = createRedactor(withSessions(given), this.credentialNames);
    this.redactorBefore5 = createRedactor(withSessions(options.extraSecrets ?? []), this.credentialNames);
  }

  source(name: string): SourceDecl {
    const source = this.model.sources.get(name);
    if (!source) throw new StepError('unknown-source', `source \`${name}\` is not declared in this mission`);
    return source;
  }

  auth(source: SourceDecl): AuthSession {
    const name = source.name.name;
    let session = this.sessions.get(name);
    if (session) return session;
    const declared = source.auth?.kind ?? 'none';
    if (this.options.credentialsError && declared !== 'none') {
      throw new StepError('credentials', `source "${name}" declares auth: ${declared}, and the run's --auth file could not be read: ${this.options.credentialsError.message}`);
    }
    const credentials = resolveCredentials({
      source: name,
      declared,
      file: this.options.credentials,
      fileName: this.options.credentialsFile,
      vars: this.env.vars,
      required: false,
    });
    if (!credentials && declared !== 'none') {
      this.options.progress(`warning: source "${name}" declares auth: ${declared} but no credentials were found; requests go out without them`);
    }
    session = new AuthSession(name, credentials, credentials?.type === 'oauth2' ? this.tokenKeeper(name, credentials.accessToken) : undefined);
    this.sessions.set(name, session);
    return session;
  }

  /** Where a refresh keeps the source's new tokens: the --auth file they came from, else nowhere (said). */
  private tokenKeeper(source: string, accessToken: string): TokenKeeper {
    const { credentials, credentialsFile, progress } = this.options;
    const keeper =
      credentials && credentialsFile && Object.hasOwn(credentials, source)
        ? new TokenKeeperOfFile(source, credentialsFile, this.env.vars, progress, accessToken)
        : new TokenKeeperOfVariables(source, progress);
    let warned = false;
    return {
      refresh: async (held, exchange, timeoutMs) => {
        const kept = await keeper.refresh(held, exchange, timeoutMs);
        // As `reqon run` says of a short credential it reads: one a refresh brought is no different.
        const short = warned ? undefined : shortSecretWarning(source, kept.credentials, 'a token the token endpoint issued for source');
        if (short !== undefined) {
          warned = true;
          progress(short);
        }
        return kept;
      },
    };
  }

  spec(source: SourceDecl): OpenApiSpec {
    const name = source.name.name;
    let spec = this.specs.get(name);
    if (spec) return spec;
    if (!source.spec) throw new StepError('no-spec', `source \`${name}\` has no OpenAPI spec (declare it with \`source ${name} from "spec.yaml"\`)`);
    // As the run remembered it when it started (a resume or verify reads what the run ran with),
    // else — a run recorded before runs remembered their specs — from disk.
    const file = specFile(source.spec.value, this.model.unit.dir);
    const remembered = this.model.attachment(file);
    spec = remembered !== undefined ? parseOpenApi(remembered, file) : loadOpenApi(source.spec.value, resolve(this.model.unit.dir, 'mission.vague'));
    this.specs.set(name, spec);
    return spec;
  }

  /**
   * The API a sync checkpoint of `source` belongs to: the base URL its requests go to (the
   * mission's, or the one a --source points it at), as checkpointApiOf names it, so a run never
   * starts from a checkpoint a run against another API left. (Before, a first production sync
   * after a trial against a test server, or after `base:` was edited from staging to production
   * (helper 75), asked only for records changed since.) Checkpoints recorded before every one
   * named its API name none where the run fetched from the mission's base: `readsUnnamed` says
   * such a run may read them when its API has none of its own.
   */
  checkpointApi(source: SourceDecl): CheckpointApi {
    let api: string | undefined;
    try {
      api = checkpointApiOf(this.base(source));
    } catch {
      api = undefined; // no base at all: the fetch fails on it, saying so
    }
    return { ...(api !== undefined ? { api } : {}), readsUnnamed: this.fetchesFromOwnBase(source) };
  }

  /**
   * The API the undeclared `sync_state` store's checkpoints belong to (sync-state.ts): they are
   * tied to no source, so to the run's: none named (the mission's own URLs) unless a --source
   * points a source away from its base — then the URLs it points to, so that a run against a
   * test server never reads or advances the checkpoints a run against the real APIs keeps. (Named
   * by every source's base, a source declared later, or a worker's --source, started them over
   * and failed a paused run's resume: helper 76.) An edit of a base is not seen here.
   */
  syncStateApi(): CheckpointApi {
    const apis = new Set<string>();
    for (const source of this.model.sources.values()) {
      if (this.fetchesFromOwnBase(source)) continue;
      const { api } = this.checkpointApi(source);
      if (api !== undefined) apis.add(api);
    }
    return { ...(apis.size > 0 ? { api: [...apis].sort().join(' ') } : {}), readsUnnamed: apis.size === 0 };
  }

  /** No --source points `source` away from the base the mission gives it. */
  private fetchesFromOwnBase(source: SourceDecl): boolean {
    const override = this.options.sources[source.name.name];
    return override === undefined || (source.base !== undefined && withoutTrailingSlash(source.base.value) === withoutTrailingSlash(override));
  }

  /** The base URL requests to `source` go to. */
  base(source: SourceDecl): string {
    const name = source.name.name;
    const override = this.options.sources[name];
    if (override) return override;
    if (source.base) return source.base.value;
    if (source.spec) {
      const fromSpec = this.spec(source).baseUrl;
      if (fromSpec) return fromSpec;
    }
    throw new StepError('no-base', `source \`${name}\` has no base URL: add \`base: "https://…"\` or pass --source ${name}=URL`);
  }

}

/** Whose checkpoints a fetch (or `sync_state`) reads and advances (HttpRuntime.checkpointApi). */
export interface CheckpointApi {
  /** The base URL (several, space-separated, for `sync_state`); absent where there is none. */
  api?: string;
  /**
   * May read a checkpoint that names no API when `api` has none: one a fetch recorded before
   * every fetch checkpoint named its API, or a `sync_state` one of the mission's own URLs.
   */
  readsUnnamed: boolean;
}

/**
 * The checkpoint `key` of the API `which` names, read with `lastSync` (the log's), or, where that
 * API has none and the run fetches from the mission's own base, one recorded before every
 * checkpoint named its API (it names none: it was of the mission's base then).
 */
export async function lastCheckpointOf(
  key: string,
  which: CheckpointApi,
  lastSync: (key: string, api?: string) => Promise<LastCheckpoint | undefined>,
): Promise<LastCheckpoint | undefined> {
  const own = await lastSync(key, which.api);
  return own ?? (which.readsUnnamed && which.api !== undefined ? lastSync(key, undefined) : undefined);
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * How a checkpoint names the API at `url`: its origin and path, a trailing slash dropped — not its
 * query, where keys live and rotate (`?code=`, `?api_key=`: a rotated key started every sync over,
 * and the key was logged in clear; helper 76). Several, space-separated, each so.
 */
export function checkpointApiOf(url: string): string {
  return url
    .split(' ')
    .map((one) => {
      try {
        const parsed = new URL(one);
        return withoutTrailingSlash(`${parsed.origin}${parsed.pathname}`);
      } catch {
        return withoutTrailingSlash(one.replace(/[?#].*$/, ''));
      }
    })
    .join(' ');
}
