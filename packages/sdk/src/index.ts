/**
 * `@vitals/sdk`, browser (default) entry: the isomorphic core. Streaming uses the global
 * `WebSocket`; uploads use XMLHttpRequest when present (progress) or fetch.
 */
export * from './core/index.js';
