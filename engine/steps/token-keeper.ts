/**
 * Keeps an oauth2 source's refreshed tokens where they came from, so that the next run — or this
 * run resumed in another process after a pause — presents the refresh token the provider issued
 * last. Providers that rotate refresh tokens (Xero, QuickBooks, Zoho, …) refuse the previous one
 * once they have issued a new one: a token kept in memory only was lost with the process, and the
 * next run failed its refresh with "invalid_grant".
 *
 * Credentials from the `--auth` file: a refresh runs under a lock beside the file. When another
 * run has refreshed since this one read the file, its tokens are taken as they are; otherwise the
 * file's refresh token is exchanged and the new tokens are written back (atomically, the file's
 * permissions kept). A field the file takes from a variable
 * (`${XERO_REFRESH}`) is not overwritten, and neither is anything of credentials from
 * `REQON_<SOURCE>_*` variables: when the refresh token of such a source rotates, the run says that
 * the next run will present the old one. Nothing here is ever logged.
 *
 * Not covered: a process killed between the provider's answer and the write leaves the file with
 * the token the provider has just retired (the exchange and the write cannot be one step); the
 * next refresh then fails with the provider's refusal, and the file needs a new token.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import type { KeptTokens, OAuth2Credentials, TokenKeeper } from '../http/auth.js';
import { envPrefix, parseCredentialsFile } from '../http/credentials.js';
import { writeFileAtomic } from '../stores/atomic-file.js';
import { withFileLock } from '../stores/file-lock.js';

type Vars = Readonly<Record<string, string | undefined>>;

/** The fields a refresh changes, under their names in the auth file. */
const ROTATED = ['accessToken', 'refreshToken'] as const;

export class TokenKeeperOfFile implements TokenKeeper {
  constructor(
    private readonly source: string,
    private readonly file: string,
    private readonly vars: Vars,
    private readonly progress: (line: string) => void,
    /** The access token the file held when the run read its credentials. */
    readAtStart: string,
  ) {
    this.lastSeen = readAtStart;
  }

  /** The access token the file held when this keeper last read it: one it still holds is no other run's refresh. */
  private lastSeen: string | undefined;

  async refresh(held: OAuth2Credentials, exchange: (from: OAuth2Credentials) => Promise<OAuth2Credentials>, timeoutMs: number): Promise<KeptTokens> {
    const exchanged = async (from: OAuth2Credentials) => ({ credentials: await exchange(from), adopted: false });
    let target: string;
    try {
      target = await realpath(this.file);
    } catch (error) {
      this.warn(`cannot read ${this.file} (${codeOf(error)})`);
      return exchanged(held);
    }
    let locked = false;
    try {
      // Held for one token exchange: stale once it has outlived one by far (a killed holder on another host).
      const lock = { timeoutMs: 2 * timeoutMs + 60_000, staleMs: timeoutMs + 30_000 };
      return await withFileLock(`${target}.lock`, lock, async () => {
        locked = true;
        const kept = await this.kept(target);
        const seen = this.lastSeen;
        this.lastSeen = kept?.accessToken;
        // Another run refreshed since this one last read the file: its access token is fresh, and
        // taking it spares an exchange that would revoke it at a provider that revokes the last.
        // (A token the file held before — one from a variable, or one a failed write left — is not.)
        if (kept && kept.accessToken !== held.accessToken && kept.accessToken !== seen) {
          return { credentials: { ...held, accessToken: kept.accessToken, refreshToken: kept.refreshToken ?? held.refreshToken }, adopted: true };
        }
        const from = kept?.refreshToken ? { ...held, refreshToken: kept.refreshToken } : held;
        const next = await exchange(from);
        await this.keep(target, from, next);
        return { credentials: next, adopted: false };
      });
    } catch (error) {
      if (locked) throw error;
      // The folder is read-only (a mounted secret): refresh all the same, and say what is lost.
      this.warn(`cannot lock ${this.file} (${codeOf(error)})`);
      return exchanged(held);
    }
  }

  /** The source's tokens as the file holds them now (another run may have refreshed them). */
  private async kept(target: string): Promise<OAuth2Credentials | undefined> {
    try {
      const kept = parseCredentialsFile(await readFile(target, 'utf8'), this.file, this.vars)[this.source];
      return kept?.type === 'oauth2' ? kept : undefined;
    } catch {
      return undefined; // an unreadable or broken file is reported by the write that follows, if any
    }
  }

  private async keep(target: string, from: OAuth2Credentials, next: OAuth2Credentials): Promise<void> {
    const changed = ROTATED.filter((field) => next[field] !== from[field]);
    if (changed.length === 0) return;
    let text: string;
    let mode: number;
    try {
      [text, mode] = await Promise.all([readFile(target, 'utf8'), stat(target).then((s) => s.mode & 0o777)]);
    } catch (error) {
      this.warnIfRotated(from, next, `cannot read ${this.file} (${codeOf(error)})`);
      return;
    }
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch {
      this.warnIfRotated(from, next, `${this.file} is no longer valid JSON`);
      return;
    }
    const entry = isObject(whole) ? whole[this.source] : undefined;
    if (!isObject(entry) || entry['type'] !== 'oauth2') {
      this.warnIfRotated(from, next, `${this.file} no longer has an oauth2 entry "${this.source}"`);
      return;
    }
    const fromVariables: string[] = [];
    let written = 0;
    for (const field of changed) {
      const was = entry[field];
      if (typeof was === 'string' && was.replace(/\$\$/g, '').includes('$')) {
        fromVariables.push(field);
        continue;
      }
      // The file is interpolated when read: a `$` of the token's own is written as `$$`.
      entry[field] = next[field]!.replace(/\$/g, '$$$$');
      written++;
    }
    if (written > 0) {
      try {
        await writeFileAtomic(target, `${JSON.stringify(whole, null, 2)}\n`, mode);
      } catch (error) {
        this.warnIfRotated(from, next, `cannot write ${this.file} (${codeOf(error)})`);
        return;
      }
    }
    if (fromVariables.includes('refreshToken')) {
      this.warn(`${this.file} takes its "refreshToken" from a variable, which the engine cannot update`);
    }
  }

  private warnIfRotated(from: OAuth2Credentials, next: OAuth2Credentials, why: string): void {
    if (next.refreshToken !== from.refreshToken) this.warn(why);
  }

  private warn(why: string): void {
    this.progress(
      `warning: source "${this.source}": ${why}; a new refresh token the token endpoint issues is used by this run only, ` +
        'and the next run presents the old one, which a provider that rotates refresh tokens refuses',
    );
  }
}

/** Credentials from `REQON_<SOURCE>_*` variables: nothing can be written back, so a rotation is said. */
export class TokenKeeperOfVariables implements TokenKeeper {
  private warned = false;

  constructor(
    private readonly source: string,
    private readonly progress: (line: string) => void,
  ) {}

  async refresh(held: OAuth2Credentials, exchange: (from: OAuth2Credentials) => Promise<OAuth2Credentials>): Promise<KeptTokens> {
    const next = await exchange(held);
    if (next.refreshToken !== held.refreshToken && !this.warned) {
      this.warned = true;
      this.progress(
        `warning: source "${this.source}": the token endpoint issued a new refresh token; this run uses it, but ${envPrefix(this.source)}REFRESH_TOKEN ` +
          'still holds the old one, which a provider that rotates refresh tokens refuses on the next run: keep oauth2 credentials in an --auth file to have them kept',
      );
    }
    return { credentials: next, adopted: false };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function codeOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return (cause as NodeJS.ErrnoException | undefined)?.code ?? (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
