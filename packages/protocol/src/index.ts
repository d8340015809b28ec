export * from './errors.js';
export * from './limits.js';
export * from './encoding.js';
export * from './ncs1.js';
export * from './ids.js';
export * from './packets.js';
export * from './telemetry.js';
export * from './frames-file.js';
