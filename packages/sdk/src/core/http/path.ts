/** URL helpers. Path parameters are escaped so the signed path equals the path the server sees. */

/**
 * Escapes one path segment, leaving RFC 3986 `pchar` characters as they are. `userRef` values
 * (`[A-Za-z0-9._:@-]`) therefore travel unescaped, and a server that signs either the raw or the
 * decoded path computes the same canonical string.
 */
export function segment(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]/g, (ch) =>
    Array.from(new TextEncoder().encode(ch), (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join(''),
  );
}

export type QueryValue = string | number | boolean | undefined | null;

export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** Joins a base address (which may carry a path prefix) and an absolute API path. */
export function joinUrl(baseUrl: string, pathAndQuery: string): URL {
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl;
  return new URL(base + pathAndQuery);
}
