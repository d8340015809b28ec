/**
 * The real server for SDK tests (`@vitals/server/testing`). Probes tell which tiers exist yet, so
 * tests written to the spec for a tier another engineer is still building are skipped, visibly.
 */
import { startTestServer } from '@vitals/server/testing';

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;
export { startTestServer };

/** True when a route answers something other than the catch-all 404 `no such route`. */
export async function routeExists(baseUrl: string, method: string, path: string): Promise<boolean> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'GET' ? undefined : '{}',
  });
  if (res.status !== 404) return true;
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  return body.error?.message !== 'no such route';
}

/** A logger that records warnings. */
export function recordingLogger(): { warn(m: string): void; messages: string[] } {
  const messages: string[] = [];
  return { warn: (m: string) => messages.push(m), messages };
}
