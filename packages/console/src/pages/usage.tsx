/**
 * Usage (GET /api/v1/usage): the usage log of the organization's keys, newest first, filtered by
 * key, status, errorCode and time; older pages with `before`, and a live tail that polls with
 * `after=tailCursor` every 3 s (docs/console.md "Usage").
 */
import { useEffect, useState } from 'preact/hooks';
import { USAGE_ERROR_CODES } from '@vitals/protocol';
import { get } from '../api/client.js';
import type { ApiKey, Page, UsageRow } from '../api/types.js';
import { Badge, Empty, ErrorNote, Field, Loading, PageHead, Select, type Tone } from '../components/ui.js';
import { fmtDateTime, fromLocalInput, toLocalInput } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { USAGE_ERROR_WORDS, USAGE_STATUS_WORDS } from '../words.js';

const TONE: Record<string, Tone> = { success: 'good', unauthorized: 'bad', rate_limited: 'warn' };
const TAIL_MS = 3000;
const MAX_ROWS = 1000;

export function UsagePage() {
  const keys = useLoad(() => get<Page<ApiKey>>('/keys'), []);
  const [keyId, setKeyId] = useState('');
  const [status, setStatus] = useState('');
  const [errorCode, setErrorCode] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [rows, setRows] = useState<UsageRow[]>([]);
  const [older, setOlder] = useState<string | null>(null);
  const [tail, setTail] = useState('');
  const [live, setLive] = useState(false);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [error, setError] = useState<unknown>(undefined);
  const filters = { keyId, status, errorCode, from: fromLocalInput(from), to: fromLocalInput(to), limit: 50 };
  const first = useLoad(() => get<Page<UsageRow>>('/usage', filters), [keyId, status, errorCode, from, to]);

  useEffect(() => {
    if (!first.data) return;
    setRows(first.data.items);
    setOlder(first.data.nextCursor ?? null);
    setTail(first.data.tailCursor ?? '');
    setFresh(new Set());
  }, [first.data]);

  const poll = async () => {
    if (!tail) return;
    try {
      const page = await get<Page<UsageRow>>('/usage', { ...filters, after: tail, limit: 200 });
      if (page.items.length) {
        const newestFirst = [...page.items].reverse();
        setRows((r) => [...newestFirst, ...r].slice(0, MAX_ROWS));
        setFresh(new Set(page.items.map((i) => i.id)));
      }
      if (page.tailCursor) setTail(page.tailCursor);
      setError(undefined);
    } catch (e) {
      setError(e);
    }
  };
  // The tail follows "now": a fixed `to` in the past would never bring new rows.
  useInterval(() => void poll(), TAIL_MS, live && !to);

  const loadOlder = async () => {
    if (!older) return;
    try {
      const page = await get<Page<UsageRow>>('/usage', { ...filters, before: older });
      setRows((r) => [...r, ...page.items]);
      setOlder(page.nextCursor ?? null);
    } catch (e) {
      setError(e);
    }
  };

  const keyName = (id: string) => keys.data?.items.find((k) => k.keyId === id)?.name || id;
  return (
    <>
      <PageHead
        title="Usage"
        intro="Every signed call your keys made, as the signature layer ruled on it: accepted, refused, or rate limited."
        actions={
          <label class="switch">
            <input
              type="checkbox"
              checked={live}
              disabled={!!to}
              onChange={(e) => setLive((e.currentTarget as HTMLInputElement).checked)}
            />
            <span>Live tail</span>
            {live && !to ? (
              <span class="live-dot" role="status">
                following new calls
              </span>
            ) : null}
          </label>
        }
      />
      <div class="card filters">
        <Select
          label="Key"
          value={keyId}
          onChange={setKeyId}
          options={[
            ['', 'All keys'],
            ...(keys.data?.items ?? []).map((k): [string, string] => [
              k.keyId,
              k.name ? `${k.name} (${k.keyId})` : k.keyId,
            ]),
          ]}
        />
        <Select
          label="Status"
          value={status}
          onChange={setStatus}
          options={[['', 'All statuses'], ...Object.entries(USAGE_STATUS_WORDS)]}
        />
        <Select
          label="Error code"
          value={errorCode}
          onChange={setErrorCode}
          options={[
            ['', 'All codes'],
            ...USAGE_ERROR_CODES.map((c): [string, string] => [c, `${USAGE_ERROR_WORDS[c]} (${c})`]),
          ]}
        />
        <Field label="From">
          <input
            type="datetime-local"
            value={from}
            onChange={(e) => setFrom((e.currentTarget as HTMLInputElement).value)}
          />
        </Field>
        <Field label="To">
          <input
            type="datetime-local"
            value={to}
            max={toLocalInput(Date.now() + 86_400_000)}
            onChange={(e) => setTo((e.currentTarget as HTMLInputElement).value)}
          />
        </Field>
      </div>
      <ErrorNote error={error ?? first.error} onRetry={first.error ? first.reload : undefined} />
      {first.loading && !first.data ? <Loading /> : null}
      {first.data && rows.length === 0 ? (
        <div class="card">
          <Empty title="No calls match">
            {keyId || status || errorCode || from || to
              ? 'Try wider filters.'
              : 'Calls signed with your keys appear here.'}
          </Empty>
        </div>
      ) : null}
      {rows.length ? (
        <div class="card table-card">
          <table class="wrap-head tight">
            <caption class="sr-only">Usage log, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Key</th>
                <th scope="col">Call</th>
                <th scope="col">Status</th>
                <th scope="col">Cause</th>
                <th scope="col" class="num">
                  Latency
                </th>
                <th scope="col">Quality</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} class={fresh.has(r.id) ? 'fresh' : undefined}>
                  <td class="small time-cell">
                    {fmtDateTime(r.time)}
                    <div class="mono muted tiny" title="Request id">
                      {r.requestId}
                    </div>
                  </td>
                  <td class="small">{keyName(r.keyId)}</td>
                  <td class="mono small break">
                    <span class="method">{r.method}</span> {r.endpoint}
                  </td>
                  <td>
                    <Badge tone={TONE[r.status] ?? 'neutral'}>{USAGE_STATUS_WORDS[r.status] ?? r.status}</Badge>
                  </td>
                  <td class="small">
                    {r.errorCode ? (
                      <span title={r.error ?? undefined}>
                        {USAGE_ERROR_WORDS[r.errorCode] ?? r.errorCode} <code class="code">{r.errorCode}</code>
                      </span>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td class="num nowrap">{r.latencyMs == null ? <span class="muted">—</span> : `${r.latencyMs} ms`}</td>
                  <td>
                    {r.qualityLevel ? (
                      <Badge tone={r.qualityLevel === 'good' ? 'good' : r.qualityLevel === 'fair' ? 'warn' : 'bad'}>
                        {r.qualityLevel}
                      </Badge>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {older ? (
            <div class="form-actions">
              <button type="button" class="btn" onClick={loadOlder}>
                Load older
              </button>
            </div>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
