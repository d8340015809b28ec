export { buildApp, toWireError, type BuildOptions } from './app.js';
export { buildServer } from './server.js';
export { loadConfig, type Config } from './config.js';
export { createContext, closeContext, openStore } from './deps.js';
export type { AppContext } from './context.js';
export { ApiError } from './errors.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
