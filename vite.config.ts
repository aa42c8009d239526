// Vite build of the React SPA in src/web. The server serves dist/web; in development,
// `npx vite` proxies API calls to a server on :3000.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const webRoot = fileURLToPath(new URL('./src/web', import.meta.url));
const outDir = fileURLToPath(new URL('./dist/web', import.meta.url));
const apiTarget = process.env.RAMPART_DEV_API ?? 'http://localhost:3000';

export default defineConfig({
  root: webRoot,
  base: '/',
  publicDir: 'public',
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: false, // keep source out of the public bundle
    target: 'es2022',
    // The CSP forbids inline scripts: never inline the module preload polyfill or assets as scripts.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: apiTarget, changeOrigin: false },
      '/healthz': { target: apiTarget },
      '/docs': { target: apiTarget },
    },
  },
});
