/**
 * The console's one door to `/api/v1` (docs/console.md "API"): JSON in the spec's envelope, the
 * session cookie sent same-origin (the server checks `Origin` on every state-changing call, which
 * the browser sets itself), errors rebuilt as `ApiError` with the wire's `code`.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Fired when a call answers 401 with a session that was believed valid: the app shows sign-in. */
export const SESSION_LOST = 'vitals:session-lost';

type Query = Record<string, string | number | boolean | null | undefined>;

/** `?a=1&b=2` from the defined, non-empty values of `q`. */
export function queryString(q: Query = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export async function request<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}${queryString(query)}`, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached.');
  }
  if (res.status === 204) return undefined as T;
  let parsed: any;
  try {
    parsed = await res.json();
  } catch {
    throw new ApiError(res.status, res.ok ? 'bad_response' : 'internal_error', `Unexpected answer (${res.status}).`);
  }
  if (parsed && parsed.ok === true) return parsed.data as T;
  const code = String(parsed?.error?.code ?? 'internal_error');
  const err = new ApiError(res.status, code, String(parsed?.error?.message ?? `HTTP ${res.status}`));
  if (res.status === 401 && path !== '/auth/login' && path !== '/me') {
    window.dispatchEvent(new CustomEvent(SESSION_LOST));
  }
  throw err;
}

export const get = <T>(path: string, query?: Query) => request<T>('GET', path, undefined, query);
export const post = <T>(path: string, body: unknown = {}) => request<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const del = <T = void>(path: string) => request<T>('DELETE', path);
