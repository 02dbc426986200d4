/**
 * Which sql/nosql store tables this PostgreSQL log's schema holds (the connection's
 * current_schema): every table but the log's own (`reqon_*`), told apart by the column that holds
 * its records (`_record`: sql, `_doc`: nosql — table-store.ts). For `reqon log copy`, which must
 * know of a table even when no run left in the log names it (its runs were pruned).
 */
import type { PoolClient } from 'pg';
import type { StoreTableRef } from '../log.js';

export async function listStoreTables(client: PoolClient): Promise<StoreTableRef[]> {
  const { rows } = await client.query<{ table_name: string; kind: 'sql' | 'nosql' }>(
    `SELECT table_name, CASE WHEN bool_or(column_name = '_doc') THEN 'nosql' ELSE 'sql' END AS kind
       FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name IN ('_record', '_doc') AND table_name NOT LIKE 'reqon\\_%'
      GROUP BY table_name
      ORDER BY table_name`,
  );
  return rows.map((r) => ({ storeKind: r.kind, table: r.table_name }));
}
