/**
 * Vitest global setup: one throwaway PostgreSQL cluster for the whole test run (pg-cluster.ts),
 * with a migrated template database that every PostgreSQL test log is copied from
 * (temp-log.ts). Skipped when REQON_TEST_BACKENDS leaves PostgreSQL out; when the binaries are
 * missing, the reason is handed to the tests, which print it and skip their PostgreSQL half.
 */
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { requestedBackends } from './backends.js';
import { startPgCluster, type PgCluster } from './pg-cluster.js';
import { openLog } from '../../engine/log/open-log.js';

export const TEMPLATE_DB = 'reqon_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster's admin URL, or why there is none. */
    reqonPg: { url: string; template: string } | { missing: string };
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
    project.provide('reqonPg', { missing: `no PostgreSQL cluster: ${(error as Error).message}` });
    return async () => undefined;
  }
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
    await admin.end();
    const log = await openLog(cluster.url.replace(/\/postgres$/, `/${TEMPLATE_DB}`));
    await log.close();
  } catch (error) {
    cluster.stop();
    throw error;
  }
  process.env['REQON_TEST_PG_URL'] = cluster.url;
  project.provide('reqonPg', { url: cluster.url, template: TEMPLATE_DB });
  return async () => cluster.stop();
}
