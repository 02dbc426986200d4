/**
 * A store table read a page at a time on PostgreSQL (StoreTables.tableReader, for `reqon log
 * copy`): a cursor in a read-only REPEATABLE READ transaction on a connection of its own. `_seq`
 * has no index (a write would pay for one), so a keyset page would scan the whole table each
 * time; the cursor sorts it once (spilling to disk past work_mem) and hands out a page per
 * FETCH. Every page comes from one snapshot of the table.
 */
import type { PoolClient } from 'pg';
import { checkLimit } from '../checks.js';
import type { TableReader, TableRow } from '../log.js';
import type { PgTableStores } from './table-store.js';

export async function openTableReader(client: PoolClient, tables: PgTableStores, storeKind: 'sql' | 'nosql', table: string): Promise<TableReader> {
  let open = true;
  /** Ends the transaction and gives the connection back (destroyed after an error: its state is unknown). */
  const finish = async (failed?: unknown): Promise<void> => {
    if (!open) return;
    open = false;
    if (failed !== undefined) return client.release(failed instanceof Error ? failed : new Error(String(failed)));
    try {
      await client.query('COMMIT');
    } catch (error) {
      return client.release(error instanceof Error ? error : new Error(String(error)));
    }
    client.release();
  };
  let empty = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const select = await tables.placedSelect(client, storeKind, table);
    if (select === null) empty = true;
    else await client.query(`DECLARE reqon_table_reader NO SCROLL CURSOR FOR ${select} ORDER BY _seq`);
  } catch (error) {
    await finish(error);
    throw error;
  }
  return {
    async next(max: number): Promise<TableRow[]> {
      checkLimit(max, 'tableReader.next: max');
      if (!open) throw new Error(`tableReader of '${table}': next() after close()`);
      if (empty) return [];
      try {
        const { rows } = await client.query<{ k: string; v: string }>(`FETCH FORWARD ${max} FROM reqon_table_reader`);
        return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown> }));
      } catch (error) {
        await finish(error);
        throw error;
      }
    },
    close: () => finish(),
  };
}
