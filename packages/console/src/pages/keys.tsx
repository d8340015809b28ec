/** API keys (GET/POST/PATCH /api/v1/keys): the secret is shown once, at creation. */
import { useState } from 'preact/hooks';
import { get, patch, post } from '../api/client.js';
import type { ApiKey, KeyInput, Page, Pricing } from '../api/types.js';
import { SecretOnce } from '../components/secret-once.js';
import { Badge, Dialog, Empty, ErrorNote, Loading, Note, PageHead } from '../components/ui.js';
import { fmtDate, fmtDateTime, fmtNumber, fmtUsd } from '../format.js';
import { useLoad } from '../hooks.js';
import { FEATURE_WORDS } from '../words.js';
import { KeyForm } from './key-form.js';

const DEFAULT_FEATURES = ['hrv', 'bp', 'spo2', 'emotion', 'gaze'];

function statusBadge(k: ApiKey) {
  if (k.status !== 'active') return <Badge tone="neutral">Disabled</Badge>;
  if (k.expiresAt && k.expiresAt < Date.now()) return <Badge tone="bad">Expired</Badge>;
  return <Badge tone="good">Active</Badge>;
}

export function KeysPage() {
  const keys = useLoad(() => get<Page<ApiKey>>('/keys'), []);
  const pricing = useLoad(() => get<Pricing>('/pricing').catch(() => undefined), []);
  const features = pricing.data ? Object.keys(pricing.data.rates.features) : DEFAULT_FEATURES;
  const [mode, setMode] = useState<{ kind: 'create' } | { kind: 'edit'; key: ApiKey } | null>(null);
  const [created, setCreated] = useState<{ key: ApiKey; secret: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');

  const act = async (fn: () => Promise<void>, message: string) => {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await fn();
      setDone(message);
      await keys.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const create = (input: KeyInput) =>
    act(async () => {
      const r = await post<{ key: ApiKey; secret: string }>('/keys', input);
      await keys.reload();
      setMode(null);
      setCreated(r);
    }, '');
  const save = (k: ApiKey, input: KeyInput) =>
    act(
      async () => {
        await patch(`/keys/${encodeURIComponent(k.keyId)}`, input);
        setMode(null);
      },
      `Key ${k.name || k.keyId} saved.`,
    );
  const toggle = (k: ApiKey) =>
    act(
      () => patch(`/keys/${encodeURIComponent(k.keyId)}`, { status: k.status === 'active' ? 'disabled' : 'active' }),
      `Key ${k.name || k.keyId} ${k.status === 'active' ? 'disabled' : 'enabled'}.`,
    );

  const items = keys.data?.items ?? [];
  return (
    <>
      <PageHead
        title="API keys"
        intro="Your backend signs every /sdk/v1 call with a key id and its secret. Limits apply per key."
        actions={
          <button type="button" class="btn btn-primary" onClick={() => (setCreated(null), setMode({ kind: 'create' }))}>
            Create key
          </button>
        }
      />
      {created ? (
        <section class="card" aria-label="New key">
          <h2>Key created</h2>
          <SecretOnce
            label="Key secret"
            secret={created.secret}
            extra={
              <p>
                Key id <code class="mono">{created.key.keyId}</code>
              </p>
            }
            onDone={() => setCreated(null)}
          />
        </section>
      ) : null}
      {done ? <Note tone="success">{done}</Note> : null}
      <ErrorNote error={mode ? keys.error : (error ?? keys.error)} onRetry={keys.error ? keys.reload : undefined} />
      {keys.loading && !keys.data ? <Loading /> : null}
      {keys.data && items.length === 0 ? (
        <div class="card">
          <Empty title="No API keys yet">Create a key to let your backend call the service.</Empty>
        </div>
      ) : null}
      {items.length ? (
        <div class="card table-card">
          <table class="wrap-head">
            <caption class="sr-only">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col" class="num">
                  Rate / min
                </th>
                <th scope="col" class="num">
                  Cloud s / month
                </th>
                <th scope="col" class="num">
                  Token cap / month
                </th>
                <th scope="col">Features</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((k) => (
                <tr key={k.keyId}>
                  <td>
                    <div class="strong">
                      {k.name || 'Unnamed key'} {k.mode === 'test' ? <Badge tone="info">Test</Badge> : null}
                    </div>
                    <code class="mono tiny">{k.keyId}</code>
                    <div class="muted small">Created {fmtDate(k.createdAt)}</div>
                  </td>
                  <td>{statusBadge(k)}</td>
                  <td>{k.expiresAt ? fmtDate(k.expiresAt) : <span class="muted">Never</span>}</td>
                  <td class="num">
                    {k.rateLimitPerMin ? fmtNumber(k.rateLimitPerMin) : <span class="muted">Off</span>}
                  </td>
                  <td class="num">
                    {k.quotaSecondsMonth == null ? <span class="muted">No quota</span> : fmtNumber(k.quotaSecondsMonth)}
                  </td>
                  <td class="num">
                    {k.tokenQuotaMonthUsd == null ? <span class="muted">No cap</span> : fmtUsd(k.tokenQuotaMonthUsd)}
                  </td>
                  <td>
                    {k.features.length ? (
                      k.features.map((f) => FEATURE_WORDS[f] ?? f).join(', ')
                    ) : (
                      <span class="muted">Core only</span>
                    )}
                  </td>
                  <td class="small">{k.lastUsedAt ? fmtDateTime(k.lastUsedAt) : <span class="muted">Never</span>}</td>
                  <td>
                    <div class="row-actions stack">
                      <button
                        type="button"
                        class="btn btn-small"
                        disabled={busy}
                        onClick={() => setMode({ kind: 'edit', key: k })}
                      >
                        Edit
                      </button>
                      <button type="button" class="btn btn-small" disabled={busy} onClick={() => toggle(k)}>
                        {k.status === 'active' ? 'Disable' : 'Enable'}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Dialog
        title={mode?.kind === 'edit' ? 'Edit key' : 'Create key'}
        open={mode !== null}
        onClose={() => setMode(null)}
      >
        {mode ? (
          <>
            <ErrorNote error={error} />
            <KeyForm
              initial={mode.kind === 'edit' ? mode.key : undefined}
              features={features}
              busy={busy}
              submitLabel={mode.kind === 'edit' ? 'Save' : 'Create'}
              onCancel={() => setMode(null)}
              onSubmit={(input) => (mode.kind === 'edit' ? save(mode.key, input) : create(input))}
            />
          </>
        ) : null}
      </Dialog>
    </>
  );
}
