/**
 * Webhooks (spec "Job webhooks", organization endpoints): up to 5 endpoints, the `whsec_` secret
 * shown once at creation or rotation, Send test event (`webhook.test`), and the delivery journal.
 */
import { useState } from 'preact/hooks';
import { del, get, post } from '../api/client.js';
import type { Endpoint, Page } from '../api/types.js';
import { SecretOnce } from '../components/secret-once.js';
import { Dialog, Empty, ErrorNote, Field, Loading, Note, PageHead, Section } from '../components/ui.js';
import { fmtDateTime } from '../format.js';
import { useLoad } from '../hooks.js';
import { Journal } from './journal.js';

const MAX_ENDPOINTS = 5;

export function WebhooksPage() {
  const endpoints = useLoad(() => get<Page<Endpoint>>('/webhooks'), []);
  const [adding, setAdding] = useState(false);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<{ title: string; endpoint: Endpoint; secret: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');
  const [confirmDelete, setConfirmDelete] = useState<Endpoint | null>(null);
  const [journalTick, setJournalTick] = useState(0);

  const items = endpoints.data?.items ?? [];
  const max = endpoints.data?.limit ?? MAX_ENDPOINTS;
  const full = items.length >= max;

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const add = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const r = await post<{ endpoint: Endpoint; secret: string }>('/webhooks', { url: url.trim() });
      setAdding(false);
      setUrl('');
      setSecret({ title: 'Endpoint added', ...r });
      await endpoints.reload();
    });
  };
  const rotate = (ep: Endpoint) =>
    act(async () => {
      const r = await post<{ endpoint: Endpoint; secret: string }>(`/webhooks/${encodeURIComponent(ep.id)}/rotate`);
      setSecret({ title: 'Secret rotated', ...r });
    });
  const test = (ep: Endpoint) =>
    act(async () => {
      await post(`/webhooks/${encodeURIComponent(ep.id)}/test`);
      setDone(`Test event sent to ${ep.url}. Its delivery appears in the journal below.`);
      setJournalTick((t) => t + 1);
    });
  const remove = (ep: Endpoint) =>
    act(async () => {
      await del(`/webhooks/${encodeURIComponent(ep.id)}`);
      setConfirmDelete(null);
      setDone(`Endpoint ${ep.url} deleted.`);
      await endpoints.reload();
    });

  return (
    <>
      <PageHead
        title="Webhooks"
        intro="Endpoints receive every cloud job event of the organization, signed with the endpoint's secret."
        actions={
          <button
            type="button"
            class="btn btn-primary"
            disabled={full}
            title={full ? `At most ${max} endpoints per organization` : undefined}
            onClick={() => (setSecret(null), setAdding(true))}
          >
            Add endpoint
          </button>
        }
      />
      {secret ? (
        <section class="card" aria-label={secret.title}>
          <h2>{secret.title}</h2>
          <SecretOnce
            label="Signing secret"
            secret={secret.secret}
            extra={
              <p>
                For <code class="mono">{secret.endpoint.url}</code>. Verify each delivery's <code>x-signature</code>{' '}
                with it, over the raw body (the SDK's webhook verification does this for you).
              </p>
            }
            onDone={() => setSecret(null)}
          />
        </section>
      ) : null}
      {done ? <Note tone="success">{done}</Note> : null}
      <ErrorNote
        error={adding ? endpoints.error : (error ?? endpoints.error)}
        onRetry={endpoints.error ? endpoints.reload : undefined}
      />
      <Section title="Endpoints" actions={<span class="muted small">{`${items.length} of ${max} endpoints`}</span>}>
        {endpoints.loading && !endpoints.data ? <Loading /> : null}
        {endpoints.data && items.length === 0 ? (
          <Empty title="No endpoints yet">Add an https endpoint to receive job events.</Empty>
        ) : null}
        {items.length ? (
          <ul class="endpoints">
            {items.map((ep) => (
              <li key={ep.id} class="endpoint">
                <div>
                  <div class="mono strong break">{ep.url}</div>
                  <div class="muted small">
                    <code>{ep.id}</code> · added {fmtDateTime(ep.createdAt)}
                  </div>
                </div>
                <div class="row-actions">
                  <button type="button" class="btn btn-small btn-primary" disabled={busy} onClick={() => test(ep)}>
                    Send test event
                  </button>
                  <button type="button" class="btn btn-small" disabled={busy} onClick={() => rotate(ep)}>
                    Rotate secret
                  </button>
                  <button
                    type="button"
                    class="btn btn-small btn-danger"
                    disabled={busy}
                    onClick={() => setConfirmDelete(ep)}
                  >
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
        ) : null}
      </Section>
      <Journal endpoints={items} refresh={journalTick} />
      <Dialog title="Add endpoint" open={adding} onClose={() => setAdding(false)}>
        <form class="form" onSubmit={add}>
          <ErrorNote error={error} />
          <Field label="Endpoint URL" hint="https only, on a publicly reachable host." wide>
            <input
              type="url"
              required
              placeholder="https://example.com/webhooks/vitals"
              value={url}
              onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)}
            />
          </Field>
          <div class="form-actions">
            <button type="button" class="btn" onClick={() => setAdding(false)}>
              Cancel
            </button>
            <button type="submit" class="btn btn-primary" disabled={busy}>
              Add
            </button>
          </div>
        </form>
      </Dialog>
      <Dialog title="Delete endpoint" open={confirmDelete !== null} onClose={() => setConfirmDelete(null)}>
        {confirmDelete ? (
          <div class="form">
            <p>
              Delete <code class="mono">{confirmDelete.url}</code>? It stops receiving events at once. Its past
              deliveries stay in the journal.
            </p>
            <div class="form-actions">
              <button type="button" class="btn" onClick={() => setConfirmDelete(null)}>
                Cancel
              </button>
              <button type="button" class="btn btn-danger" disabled={busy} onClick={() => remove(confirmDelete)}>
                Delete endpoint
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>
    </>
  );
}
