/**
 * Connection slice: the push channel's health as the bridge reports it, shown in the status bar.
 * Requests may still succeed while the socket is reconnecting; this is only about live pushes.
 */
import type { StateCreator } from 'zustand';
import type { ConnectionStatus } from '../lib/connection-status.js';
import type { StudioState } from './studio-store.js';

export interface ConnectionSlice {
  connection: ConnectionStatus;
  setConnection: (status: ConnectionStatus) => void;
}

export const createConnectionSlice: StateCreator<StudioState, [], [], ConnectionSlice> = (set) => ({
  connection: { state: 'connecting', attempt: 0 },
  setConnection: (connection) => set({ connection }),
});
