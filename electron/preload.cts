/**
 * The bridge between the sandboxed renderer and the main process: exactly
 * `window.reqon = { invoke(channel, req), on(channel, cb) }` and nothing else.
 *
 * A sandboxed preload runs as CommonJS and may require only 'electron', so this file imports
 * types only and repeats the two IPC channel names of ipc-channels.ts. The renderer never sees
 * `ipcRenderer` itself: `on` hands back an unsubscribe function and passes payloads, not events.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { ProtocolError, PushChannel, Pushes, RequestChannel, Requests } from '../engine/protocol/protocol.js';

const INVOKE_CHANNEL = 'reqon:invoke';
const PUSH_CHANNEL = 'reqon:push';

type InvokeReply = { ok: true; value: unknown } | { ok: false; error: ProtocolError };

const bridge = {
  async invoke<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']> {
    const reply = (await ipcRenderer.invoke(INVOKE_CHANNEL, channel, req)) as InvokeReply;
    if (reply.ok) return reply.value as Requests[C]['res'];
    throw reply.error;
  },
  on<P extends PushChannel>(channel: P, cb: (payload: Pushes[P]) => void): () => void {
    const listener = (_event: IpcRendererEvent, pushed: string, payload: unknown) => {
      if (pushed === channel) cb(payload as Pushes[P]);
    };
    ipcRenderer.on(PUSH_CHANNEL, listener);
    return () => {
      ipcRenderer.removeListener(PUSH_CHANNEL, listener);
    };
  },
};

contextBridge.exposeInMainWorld('reqon', bridge);
