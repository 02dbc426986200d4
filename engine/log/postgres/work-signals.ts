/**
 * Work signals on PostgreSQL (EventLog.watchWork): every transaction that leaves work for a
 * worker — a run created, released or left running without an owner, suspended with a timer,
 * resumed; a webhook delivered; a schedule registered — runs `notifyWork` inside it, so the
 * NOTIFY is delivered at its COMMIT and never for a rolled-back one. A worker LISTENs on one
 * dedicated connection (not the pool's: LISTEN belongs to a session). The signal carries
 * nothing; the tables stay the truth.
 *
 * A listening connection that breaks (a server restart, a network cut) is reopened with a
 * doubling delay; once it is back the listener is called once, since a signal may have been
 * missed meanwhile — the worker's own polling covers the gap.
 */
import pg from 'pg';

export const WORK_CHANNEL = 'reqon_work';

/** Inside the caller's transaction: tell every listener there is new work when it commits. */
export async function notifyWork(client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_notify('${WORK_CHANNEL}', '')`);
}

export async function listenForWork(config: pg.ClientConfig, listener: () => void): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = 250;

  const connect = async (): Promise<void> => {
    const c = new pg.Client(config);
    c.on('notification', (message) => {
      if (message.channel === WORK_CHANNEL) listener();
    });
    // Unheard, a broken connection's 'error' would kill the process; it is followed by 'end'.
    c.on('error', () => undefined);
    c.on('end', () => {
      // Only a connection that was listening is reopened here; a failed attempt is retried by its caller.
      if (client !== c) return;
      client = undefined;
      if (!stopped) reconnectLater();
    });
    await c.connect();
    await c.query(`LISTEN ${WORK_CHANNEL}`);
    if (stopped) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    delayMs = 250;
  };

  const reconnectLater = (): void => {
    if (retry !== undefined || stopped) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        () => listener(),
        () => {
          delayMs = Math.min(delayMs * 2, 5000);
          reconnectLater();
        },
      );
    }, delayMs);
    retry.unref();
  };

  await connect();
  return async () => {
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
