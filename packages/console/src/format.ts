/** Display formats used by every page (one place, so pages read alike). */

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});
const dateOnly = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const fmtDateTime = (ms: number | null | undefined): string => (ms ? dateTime.format(ms) : '—');
export const fmtDate = (ms: number | null | undefined): string => (ms ? dateOnly.format(ms) : '—');
export const fmtTime = (ms: number | null | undefined): string => (ms ? timeOnly.format(ms) : '—');

/** Dollars: cents for ordinary amounts, more digits for per-second rates. */
export function fmtUsd(v: number | null | undefined, digits?: number): string {
  if (v === null || v === undefined) return '—';
  const d = digits ?? (Math.abs(v) > 0 && Math.abs(v) < 0.01 ? 4 : 2);
  return `$${v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })}`;
}

export function fmtNumber(v: number | null | undefined, digits = 0): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Seconds as `1 h 02 min`, `3 min 20 s`, `45 s`. */
export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '—';
  const t = Math.round(s);
  if (t < 60) return `${t} s`;
  if (t < 3600) return `${Math.floor(t / 60)} min ${String(t % 60).padStart(2, '0')} s`;
  return `${Math.floor(t / 3600)} h ${String(Math.floor((t % 3600) / 60)).padStart(2, '0')} min`;
}

/** `YYYY-MM` of a date in UTC (the server counts months in UTC). */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

export function monthLabel(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    Date.UTC(y, m - 1, 1),
  );
}

/** A value for `<input type="datetime-local">` from epoch ms (local time), and back. */
export function toLocalInput(ms: number | null | undefined): string {
  if (!ms) return '';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
export const fromLocalInput = (s: string): number | undefined => (s ? new Date(s).getTime() : undefined);
