/** The SDK client as the CLI uses it. */
import { VitalsClient, SDK_VERSION } from '@vitals/sdk';
import type { CliConfig } from './config.js';
import { warnTo, type CliIo } from './io.js';

export const CLI_VERSION = '0.1.0';

/**
 * One-shot calls fail fast on 429 (exit 7) instead of sleeping through a minute-long window;
 * the polling loops (job wait, log tail) back off on their own. 503 is still retried.
 */
export function makeClient(config: CliConfig, io: CliIo): VitalsClient {
  return new VitalsClient({
    keyId: config.keyId,
    secret: config.secret,
    baseUrl: config.baseUrl,
    logger: warnTo(io),
    retry: { maxResetWaitMs: 0 },
    headers: { 'user-agent': `vitals-cli/${CLI_VERSION} vitals-sdk/${SDK_VERSION}` },
  });
}
