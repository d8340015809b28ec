/**
 * A real S3 protocol server for tests: s3rver, over HTTP on an ephemeral loopback port, objects in
 * a temp dir, in a child process of its own (s3rver-child.mjs) so that it can have OpenSSL's legacy
 * provider (its ListObjectsV2 continuation tokens use DES). s3rver checks the access key id
 * (S3RVER) but not SigV4 signatures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

// The SDK's advisory that releases after January 2027 will need Node 22 (docs/decisions.md).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' } as const;

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** `VITALS_OBJECTS_URL` for this server (optionally under a key prefix). */
  objectsUrl(prefix?: string): string;
  /** Environment for loadConfig: the objects URL and the credentials. */
  env(prefix?: string): Record<string, string>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url));

export async function startS3(bucket = 'vitals-test'): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-s3rver-'));
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, dir, bucket], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('s3rver did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const objectsUrl = (prefix?: string): string =>
    `s3://${bucket}${prefix ? `/${prefix}` : ''}?endpoint=${endpoint}&region=us-east-1`;
  return {
    endpoint,
    bucket,
    objectsUrl,
    env: (prefix) => ({ VITALS_OBJECTS_URL: objectsUrl(prefix), ...S3RVER_CREDENTIALS }),
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.stdin!.end();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(kill);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
