/** A test-side HttpTransport over Node's fetch (the engine's real one lives in engine/env). */
import { TransportError, type HttpTransport } from '../../../engine/env/env.js';

export const fetchTransport: HttpTransport = {
  async send(request) {
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.timeout(request.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      throw new TransportError(`${request.method} ${request.url}: ${(error as Error).message}`, name === 'TimeoutError' ? 'timeout' : 'network');
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: response.status, headers, body: await response.text() };
  },
};
