/**
 * Vite build of the studio renderer: root is renderer/, output renderer/dist with relative
 * asset URLs (base './') so the same build loads from file:// in Electron and from the studio
 * server's HTTP root in a browser.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const repo = path.dirname(path.resolve(root));

/**
 * The dev server only (`vite`): its page talks to a studio server on another port (`?server=`)
 * and to Vite's own HMR socket, which the built page's `connect-src 'self'` would refuse.
 */
function devConnections(): Plugin {
  return {
    name: 'reqon-dev-connections',
    apply: 'serve',
    transformIndexHtml: (html) => html.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:* ws://127.0.0.1:* ws://localhost:*"),
  };
}

/** Records the files this build bundled, so renderer/build-if-stale.mjs can tell when to rebuild. */
function buildInputs(): Plugin {
  return {
    name: 'reqon-build-inputs',
    apply: 'build',
    generateBundle() {
      const files = [...this.getModuleIds()]
        .map((id) => id.split('?')[0]!)
        .filter((id) => path.isAbsolute(id) && fs.existsSync(id))
        .map((id) => path.relative(repo, id).split(path.sep).join('/'));
      this.emitFile({ type: 'asset', fileName: '.build-inputs.json', source: JSON.stringify([...new Set(files)].sort()) });
    },
  };
}

export default defineConfig({
  root,
  base: './',
  plugins: [react(), buildInputs(), devConnections()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
  },
});
