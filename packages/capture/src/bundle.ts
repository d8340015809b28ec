/**
 * The model bundle, fetched from the service with the grant (issue 15 §1, CONTRACT-BROWSER):
 * `GET manifest` then every file the tracker needs, each with `Authorization: Bearer <grant>`, each
 * checked against the manifest's SHA-256 before use. Nothing is fetched from anywhere else.
 */

/** `data` of `POST /sdk/v1/models/grant` (and of the demo's `POST /demo/api/grant`). */
export interface ModelGrant {
  grant: string;
  expiresAt: number;
  modelsVersion: string;
  origin?: string;
  manifestUrl: string;
}

export interface ManifestFile {
  name: string;
  url: string;
  sha256: string;
  bytes: number;
  contentType: string;
}

export interface LoadedBundle {
  modelsVersion: string;
  /** Verified bytes by original file name. */
  files: Map<string, Uint8Array>;
  /** Bytes transferred (after content encoding, when the browser says so). */
  transferBytes: number;
}

export class BundleError extends Error {
  constructor(
    readonly code: 'grant_refused' | 'bundle_unavailable' | 'bundle_corrupt',
    message: string,
  ) {
    super(message);
    this.name = 'BundleError';
  }
}

/** The files the page's tracker needs: BlazeFace, FaceMesh and the tfjs WASM runtime. */
export const TRACKER_FILES = [
  'blazeface.json',
  'blazeface.bin',
  'facemesh.json',
  'facemesh.bin',
  'tfjs-backend-wasm.wasm',
  'tfjs-backend-wasm-simd.wasm',
] as const;

const hex = (buf: ArrayBuffer): string => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

async function get(url: string, grant: string, fetchFn: typeof fetch): Promise<Response> {
  let res: Response;
  try {
    res = await fetchFn(url, { headers: { Authorization: `Bearer ${grant}` }, credentials: 'omit' });
  } catch (err) {
    throw new BundleError('bundle_unavailable', `The model bundle could not be fetched: ${String(err)}`);
  }
  if (res.status === 401 || res.status === 403)
    throw new BundleError('grant_refused', 'The model grant was refused (missing, expired or for another origin).');
  if (!res.ok) throw new BundleError('bundle_unavailable', `The model bundle answered HTTP ${res.status}.`);
  return res;
}

/** Fetches and verifies the tracker's files (`names`) of the bundle the grant unlocks. */
export async function loadBundle(
  grant: ModelGrant,
  opts: { names?: readonly string[]; fetch?: typeof fetch } = {},
): Promise<LoadedBundle> {
  const fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const names = opts.names ?? TRACKER_FILES;
  const manifest = (await (await get(grant.manifestUrl, grant.grant, fetchFn)).json()) as {
    data?: { modelsVersion: string; files: ManifestFile[] };
  };
  const list = manifest.data?.files ?? [];
  const files = new Map<string, Uint8Array>();
  let transferBytes = 0;
  await Promise.all(
    names.map(async (name) => {
      const entry = list.find((f) => f.name === name);
      if (!entry) throw new BundleError('bundle_unavailable', `The model bundle has no ${name}.`);
      const res = await get(new URL(entry.url, grant.manifestUrl).href, grant.grant, fetchFn);
      const body = await res.arrayBuffer();
      const digest = hex(await crypto.subtle.digest('SHA-256', body));
      if (digest !== entry.sha256.toLowerCase())
        throw new BundleError('bundle_corrupt', `${name} does not match its SHA-256 in the manifest.`);
      transferBytes += Number(res.headers.get('content-length')) || body.byteLength;
      files.set(name, new Uint8Array(body));
    }),
  );
  return { modelsVersion: manifest.data?.modelsVersion ?? grant.modelsVersion, files, transferBytes };
}
