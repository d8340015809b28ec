/**
 * Who may reach the demo (docs/operating.md, "The demo"; docs/decisions.md, "The demo"). The demo
 * acts with the development organization's key, so:
 * - in `loopback` mode (the default on a loopback listener) only a loopback `Host` is served: a
 *   public name resolving to 127.0.0.1 (DNS rebinding) gets the plain 404 of a demo that is off;
 * - a browser request from another origin is refused (403 `forbidden`): another site open in the
 *   same browser cannot mint sessions or grants with the development key.
 */
import type { FastifyRequest } from 'fastify';
import { isLoopbackHost, type DemoMode } from '../config.js';
import { ApiError } from '../errors.js';
import type { AppContext } from '../context.js';

/** The `Host` header's name without its port (IPv6 brackets kept off). */
export function hostName(host: string | undefined): string {
  if (!host) return '';
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  return host.replace(/:\d+$/, '');
}

/** The demo answers this request's Host (else the route does not exist for it). */
export function demoServes(mode: DemoMode, req: FastifyRequest): boolean {
  if (mode === 'on') return true;
  if (mode === 'off') return false;
  return isLoopbackHost(hostName(req.headers.host));
}

/** This service's own origins for this request: the Host it was asked for, and VITALS_PUBLIC_URL. */
function ownOrigins(ctx: AppContext, req: FastifyRequest): string[] {
  const out: string[] = [];
  // As a browser serializes it (no default port); a Host that is no host name matches nothing.
  for (const base of [`${req.protocol}://${req.host}`, ctx.publicUrl]) {
    if (!base) continue;
    try {
      out.push(new URL(base).origin);
    } catch {
      continue;
    }
  }
  return out;
}

/**
 * Refuses a cross-origin browser request (an `Origin` header that is not this service). Requests
 * without `Origin` (same-origin GETs, programs on the machine) pass: a browser always sends it
 * with a cross-origin request and with every POST.
 */
export function assertSameOrigin(ctx: AppContext, req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  if (!ownOrigins(ctx, req).includes(origin))
    throw new ApiError('forbidden', 'the demo backend answers its own page only (cross-origin request refused)');
}
