/**
 * Picks the object store (called from deps.ts, the one place adapters are chosen). The data-dir
 * folder is the default; `VITALS_OBJECTS_URL` (parsed by config.ts into `config.s3`) selects the
 * S3-compatible adapter, which spools uploads and downloads under `<data dir>/objects-tmp`.
 */
import path from 'node:path';
import type { Config } from '../config.js';
import { FsObjectStore } from './fs-store.js';
import { S3ObjectStore } from './s3-store.js';
import type { ObjectStore } from './object-store.js';

export type { ObjectStore, StoredObject } from './object-store.js';
export { ObjectTooLargeError } from './object-store.js';
export { FsObjectStore } from './fs-store.js';
export { S3ObjectStore } from './s3-store.js';
export { ObjectStoreError } from './s3-errors.js';

export function createObjectStore(config: Config): ObjectStore {
  if (config.s3) return new S3ObjectStore(config.s3, path.join(config.dataDir, 'objects-tmp'));
  return new FsObjectStore(path.join(config.dataDir, 'objects'));
}
