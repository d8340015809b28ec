/**
 * The delivery journal (GET /api/v1/webhooks/deliveries): every delivery with its status, last
 * HTTP code, attempts, last error and response time; filters; redeliver (the server regenerates the
 * body from the job's current state, spec "Job webhooks").
 */
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../api/client.js';
import type { Delivery, Endpoint, Page } from '../api/types.js';
import { Badge, Empty, ErrorNote, Loading, Note, Section, Select, type Tone } from '../components/ui.js';
import { fmtDateTime, fmtNumber } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { EVENT_NAMES } from '../words.js';

const TONE: Record<string, Tone> = { succeeded: 'good', failed: 'bad', pending: 'warn', delivering: 'warn' };
const WORD: Record<string, string> = {
  succeeded: 'Succeeded',
  failed: 'Failed',
  pending: 'Pending',
  delivering: 'Delivering',
};

export function Journal(props: { endpoints: Endpoint[]; refresh: number }) {
  const [endpointId, setEndpointId] = useState('');
  const [event, setEvent] = useState('');
  const [outcome, setOutcome] = useState('');
  const [more, setMore] = useState<Delivery[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [watchUntil, setWatchUntil] = useState(0);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');
  const filters = { endpointId, event, outcome, limit: 50 };
  const page = useLoad(() => get<Page<Delivery>>('/webhooks/deliveries', filters), [endpointId, event, outcome]);

  useEffect(() => {
    setMore([]);
    setCursor(page.data?.nextCursor ?? null);
  }, [page.data]);
  // After a test or a redelivery, and while any delivery is pending, refresh every 1.5 s (30 s at most).
  useEffect(() => {
    if (props.refresh > 0) {
      setWatchUntil(Date.now() + 30_000);
      void page.reload();
    }
  }, [props.refresh]);
  const rows = [...(page.data?.items ?? []), ...more];
  const pending = rows.some((d) => d.status === 'pending' || d.status === 'delivering');
  useInterval(() => void page.reload(), 1500, pending || Date.now() < watchUntil);

  const loadMore = async () => {
    if (!cursor) return;
    try {
      const next = await get<Page<Delivery>>('/webhooks/deliveries', { ...filters, cursor });
      setMore((m) => [...m, ...next.items]);
      setCursor(next.nextCursor ?? null);
    } catch (e) {
      setError(e);
    }
  };
  const redeliver = async (d: Delivery) => {
    setBusy(d.id);
    setError(undefined);
    setDone('');
    try {
      const r = await post<{ deliveryId: string }>(`/webhooks/deliveries/${encodeURIComponent(d.id)}/redeliver`);
      setDone(`Redelivery ${r?.deliveryId ?? ''} queued.`);
      setWatchUntil(Date.now() + 30_000);
      await page.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy('');
    }
  };
  // The scheme is always https: the host and path say which endpoint it is.
  const urlOf = (d: Delivery) =>
    (d.url ?? props.endpoints.find((e) => e.id === d.endpointId)?.url ?? d.endpointId ?? '—').replace(
      /^https:\/\//,
      '',
    );

  return (
    <Section
      title="Delivery journal"
      actions={
        <button type="button" class="btn btn-small" onClick={() => void page.reload()}>
          Refresh
        </button>
      }
    >
      <div class="filters">
        <Select
          label="Endpoint"
          value={endpointId}
          onChange={setEndpointId}
          options={[['', 'All endpoints'], ...props.endpoints.map((e): [string, string] => [e.id, e.url])]}
        />
        <Select
          label="Event"
          value={event}
          onChange={setEvent}
          options={[['', 'All events'], ...EVENT_NAMES.map((e): [string, string] => [e, e])]}
        />
        <Select
          label="Outcome"
          value={outcome}
          onChange={setOutcome}
          options={[
            ['', 'All outcomes'],
            ['succeeded', 'Succeeded'],
            ['failed', 'Failed'],
            ['pending', 'Pending'],
          ]}
        />
      </div>
      {done ? <Note tone="success">{done}</Note> : null}
      <ErrorNote error={error ?? page.error} onRetry={page.error ? page.reload : undefined} />
      {page.loading && !page.data ? <Loading /> : null}
      {page.data && rows.length === 0 ? (
        <Empty title="No deliveries">
          {endpointId || event || outcome
            ? 'Nothing matches these filters.'
            : 'Press Send test event to try an endpoint.'}
        </Empty>
      ) : null}
      {rows.length ? (
        <div class="table-wrap tight">
          <table class="wrap-head">
            <caption class="sr-only">Webhook deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  HTTP
                </th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col" class="num">
                  Response
                </th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td class="small nowrap">
                    {fmtDateTime(d.createdAt)}
                    <div class="mono muted tiny">{d.id}</div>
                    {d.redeliveryOf ? (
                      <div class="muted tiny">
                        redelivery of
                        <br />
                        <span class="mono">{d.redeliveryOf}</span>
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <code>{d.event}</code>
                    {d.jobId ? <div class="muted tiny mono">{d.jobId}</div> : null}
                  </td>
                  <td class="mono small break url-cell">{urlOf(d)}</td>
                  <td>
                    <Badge tone={TONE[d.status] ?? 'neutral'}>{WORD[d.status] ?? d.status}</Badge>
                    <div>
                      <button
                        type="button"
                        class="btn btn-small btn-link"
                        disabled={busy !== '' || d.status === 'pending'}
                        onClick={() => redeliver(d)}
                      >
                        Redeliver
                      </button>
                    </div>
                  </td>
                  <td class="num mono">{d.httpStatus ?? <span class="muted">—</span>}</td>
                  <td class="num">
                    {d.attempts}
                    {d.maxAttempts ? <span class="muted">{` / ${d.maxAttempts}`}</span> : null}
                  </td>
                  <td class="num nowrap">
                    {d.responseTimeMs == null ? <span class="muted">—</span> : `${fmtNumber(d.responseTimeMs)} ms`}
                  </td>
                  <td class="small">{d.lastError ?? <span class="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {cursor && rows.length ? (
        <div class="form-actions">
          <button type="button" class="btn" onClick={loadMore}>
            Load more
          </button>
        </div>
      ) : null}
    </Section>
  );
}
