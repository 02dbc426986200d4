/**
 * Entry point: starts the bridge and the store sync, then mounts the studio.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './components/App.js';
import { startStudioSync } from './lib/studio-sync.js';
import { useStudio } from './store/studio-store.js';

startStudioSync(useStudio);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element to mount the studio into.');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
