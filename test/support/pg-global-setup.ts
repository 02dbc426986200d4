/**
 * Vitest global setup: one throwaway PostgreSQL cluster for the whole test run (pg-cluster.ts),
 * with one database, `reqon_test`, in which every PostgreSQL test log gets a schema of its own
 * (temp-log.ts; a fresh database each cost 1.4 s here with fsync on, a schema milliseconds). Skipped when REQON_TEST_BACKENDS leaves PostgreSQL out; when the binaries are
 * missing, the reason is handed to the tests, which print it and skip their PostgreSQL half.
 */
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { requestedBackends } from './backends.js';
import { startPgCluster, type PgCluster } from './pg-cluster.js';

export const TEST_DB = 'reqon_test';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster's admin URL, or why there is none. */
    reqonPg: { url: string } | { missing: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!requestedBackends().includes('postgres')) {
    project.provide('reqonPg', { missing: 'REQON_TEST_BACKENDS leaves PostgreSQL out' });
    return async () => undefined;
  }
  let cluster: PgCluster;
  try {
    cluster = await startPgCluster();
  } catch (error) {
    const missing = `no PostgreSQL cluster: ${(error as Error).message}`;
    console.warn(`[pg-global-setup] the PostgreSQL half of the log tests is SKIPPED: ${missing}`);
    project.provide('reqonPg', { missing });
    return async () => undefined;
  }
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${TEST_DB}`);
    await admin.end();
  } catch (error) {
    cluster.stop();
    throw error;
  }
  const url = cluster.url.replace(/\/postgres$/, `/${TEST_DB}`);
  process.env['REQON_TEST_PG_URL'] = url;
  project.provide('reqonPg', { url });
  return async () => cluster.stop();
}
