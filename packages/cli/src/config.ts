/**
 * Configuration is read once, here, from the environment (design/CONTRACT.md): VITALS_KEY_ID,
 * VITALS_KEY_SECRET and optional VITALS_BASE_URL.
 */
import { CliError } from './errors.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

export interface CliConfig {
  readonly keyId: string;
  readonly secret: string;
  readonly baseUrl: string;
}

export function loadConfig(env: Record<string, string | undefined>): CliConfig {
  const keyId = env.VITALS_KEY_ID?.trim();
  const secret = env.VITALS_KEY_SECRET?.trim();
  const missing = [!keyId && 'VITALS_KEY_ID', !secret && 'VITALS_KEY_SECRET'].filter(Boolean);
  if (missing.length > 0) {
    throw new CliError('config_error', `missing credentials: set ${missing.join(' and ')}`);
  }
  const baseUrl = env.VITALS_BASE_URL?.trim() || DEFAULT_BASE_URL;
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new CliError('config_error', `VITALS_BASE_URL is not an http(s) address: ${baseUrl}`);
  }
  return Object.freeze({ keyId: keyId!, secret: secret!, baseUrl });
}
