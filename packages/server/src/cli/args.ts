/** Small helpers for the operator command line (node:util parseArgs, no dependency). */
export class UsageError extends Error {}

export function toCamel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}
