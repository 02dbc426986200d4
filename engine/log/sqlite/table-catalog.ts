/**
 * Which sql/nosql store tables this SQLite log's file holds: every table that is not the log's
 * own (`reqon_*`) or SQLite's (`sqlite_*`), told apart by the column that holds its records
 * (`_record`: sql, `_doc`: nosql — table-store.ts). For `reqon log copy`, which must know of a
 * table even when no run left in the log names it (its runs were pruned).
 */
import type Database from 'better-sqlite3';
import type { StoreTableRef } from '../log.js';

export function listStoreTables(db: Database.Database): StoreTableRef[] {
  const rows = db
    .prepare<[], { name: string; kind: 'sql' | 'nosql' }>(
      `SELECT m.name, CASE WHEN EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = '_doc') THEN 'nosql' ELSE 'sql' END AS kind
         FROM sqlite_schema m
        WHERE m.type = 'table' AND m.name NOT LIKE 'reqon\\_%' ESCAPE '\\' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
          AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name IN ('_record', '_doc'))
        ORDER BY m.name`,
    )
    .all();
  return rows.map((r) => ({ storeKind: r.kind, table: r.name }));
}
