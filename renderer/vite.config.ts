/**
 * Vite build of the studio renderer: root is renderer/, output renderer/dist with relative
 * asset URLs (base './') so the same build loads from file:// in Electron and from the studio
 * server's HTTP root in a browser.
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
  },
});
