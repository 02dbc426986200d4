/**
 * A log with some of its methods replaced: the stand-in a test gives the engine to make one call
 * fail, lose its reply or read differently, every other call going to the real log.
 */
import type { EventLog } from '../../engine/log/log.js';

export function overriding(log: EventLog, methods: Partial<EventLog>): EventLog {
  return new Proxy(log, {
    get(target, prop) {
      const own = (methods as Record<string | symbol, unknown>)[prop];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
