/**
 * The AWS SDK clients of the S3-compatible object store (s3-store.ts). The SDK is imported on first
 * use (the default data-dir deployment never loads it), and opening checks the bucket (HeadBucket)
 * so a wrong endpoint, bucket or credential fails with a clear message.
 */
import type * as S3 from '@aws-sdk/client-s3';
import type { S3Settings } from '../config.js';
import { wrap } from './s3-errors.js';

export interface Sdk {
  m: typeof S3;
  /** Reads, heads, deletes, lists: the SDK retries these itself. */
  client: S3.S3Client;
  /** PutObject with a stream body: one attempt per send, retried by `put` with a fresh stream. */
  putClient: S3.S3Client;
}

/** Imports the SDK, makes the two clients and checks the bucket (both clients are destroyed if that fails). */
export async function openSdk(s: S3Settings): Promise<Sdk> {
  const m = await import('@aws-sdk/client-s3');
  const base: S3.S3ClientConfig = {
    region: s.region,
    endpoint: s.endpoint,
    forcePathStyle: s.forcePathStyle,
    credentials: s.credentials(),
    // Checksums only where S3 requires them: the SDK's default (aws-chunked bodies with trailing
    // CRC32 checksums) is not understood by many S3-compatible servers; the SHA-256 of every
    // object is computed here anyway and kept as metadata.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  };
  const client = new m.S3Client({ ...base, maxAttempts: 3 });
  const putClient = new m.S3Client({ ...base, maxAttempts: 1 });
  try {
    await client.send(new m.HeadBucketCommand({ Bucket: s.bucket }));
  } catch (err) {
    client.destroy();
    putClient.destroy();
    throw wrap(`bucket check of "${s.bucket}"${s.endpoint ? ` at ${s.endpoint}` : ''}`, err);
  }
  return { m, client, putClient };
}
