/**
 * Which store targets can ever be used, known from the declaration alone: `sql("x y")` and
 * `file("../escaped")` checked clean and failed the run at the store's first write (after the
 * writes before it committed). The engine's own rules are the final word — the table stores'
 * (log/store-rules.ts checkTableName) and the file store's (stores/file-store.ts storeFilePath);
 * these are the same rules, for the checker, which may import neither layer.
 * test/lang/store-targets.test.ts holds the two to the same verdicts.
 */
import type { StoreType } from './ast.js';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RESERVED_TABLE = /^(reqon_|sqlite_|pg_)/i;

/** Why a store of `kind` can never use `target`, or undefined when it can. */
export function storeTargetProblem(kind: StoreType, target: string): string | undefined {
  if (kind === 'sql' || kind === 'nosql') {
    if (!TABLE_NAME.test(target)) return `is not a plain identifier (letters, digits and _, not starting with a digit, at most 63 characters)`;
    if (RESERVED_TABLE.test(target)) return `is reserved ('reqon_' names belong to the run log, 'sqlite_' to SQLite, 'pg_' to PostgreSQL)`;
    return undefined;
  }
  if (kind === 'file') {
    if (target === '') return 'is empty';
    if (target.includes('\0')) return 'contains a NUL character';
    if (target.includes('\\')) return 'contains a backslash (use "/" between folders)';
    if (target.startsWith('/') || /^[A-Za-z]:/.test(target)) return 'is an absolute path';
    for (const segment of target.split('/')) {
      if (segment === '..') return 'contains ".." (it would leave the data folder)';
      if (segment === '' || segment === '.') return 'contains an empty or "." path segment';
    }
  }
  return undefined;
}
