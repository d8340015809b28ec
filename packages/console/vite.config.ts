import { defineConfig } from 'vite';

// Built at install time (`prepare`) into dist/, served by the server under /console with a strict
// CSP: no inline script or style, nothing from a CDN (docs/console.md "Serving").
export default defineConfig({
  base: '/console/',
  resolve: { conditions: ['source'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The preload polyfill would be an inline helper; every browser the console targets has it.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
  },
});
