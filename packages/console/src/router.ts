/**
 * A small history router under `/console` (the server answers every non-asset path below it with
 * index.html, docs/console.md). Paths inside the app are written without the base: `/keys`.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';
const CHANGED = 'vitals:navigate';

export function currentPath(): string {
  const p = window.location.pathname;
  const inside = p.startsWith(BASE) ? p.slice(BASE.length) : p;
  return inside === '' ? '/' : inside;
}

export const hrefOf = (to: string): string => `${BASE}${to === '/' ? '/' : to}`;

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = hrefOf(to);
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(CHANGED));
}

/** The current in-app path; re-renders on navigation and on back/forward. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener('popstate', on);
    window.addEventListener(CHANGED, on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener(CHANGED, on);
    };
  }, []);
  return path;
}

/** `/users/:keyId/:userRef` against `/users/key_1/alice` -> `{ keyId, userRef }` (decoded), else null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean);
  const b = path.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) out[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return out;
}

/** Click handler for in-app links: plain left clicks stay in the app, others behave as links. */
export function onLinkClick(e: MouseEvent, to: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(to);
  window.scrollTo(0, 0);
}
