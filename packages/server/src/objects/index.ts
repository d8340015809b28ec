/**
 * Picks the object store (called from deps.ts, the one place adapters are chosen). The data-dir
 * folder is the default; `VITALS_OBJECTS_URL` (S3-compatible) is recognised but not implemented in
 * this build: the service refuses to start rather than silently writing to disk.
 */
import path from 'node:path';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { FsObjectStore } from './fs-store.js';
import type { ObjectStore } from './object-store.js';

export type { ObjectStore, StoredObject } from './object-store.js';
export { ObjectTooLargeError } from './object-store.js';
export { FsObjectStore } from './fs-store.js';

export function createObjectStore(config: Config): ObjectStore {
  if (config.objectsUrl) {
    throw new ConfigError(
      'VITALS_OBJECTS_URL is set, but the S3-compatible object store is not implemented in this build; ' +
        'unset it to keep uploads in the data dir (see docs/batch.md, "Objects")',
    );
  }
  return new FsObjectStore(path.join(config.dataDir, 'objects'));
}
