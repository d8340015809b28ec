/**
 * Billing (GET /api/v1/billing): the token balance or "Unmetered", the pricing of
 * GET /api/v1/pricing, spend by month, and packs bought through the operator's payment provider
 * (docs/console.md "Payment providers"; none configured: the Buy buttons say so).
 */
import { useState } from 'preact/hooks';
import { post } from '../api/client.js';
import { get } from '../api/client.js';
import type { Billing, Purchase } from '../api/types.js';
import { Badge, Empty, ErrorNote, Loading, Note, PageHead, Section } from '../components/ui.js';
import { fmtDateTime, fmtSeconds, fmtUsd, monthLabel } from '../format.js';
import { useLoad } from '../hooks.js';
import { FEATURE_WORDS } from '../words.js';

export function BillingPage() {
  const billing = useLoad(() => get<Billing>('/billing'), []);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');
  const b = billing.data;
  const metered = b ? b.balanceUsd !== null : false;

  const buy = async (packId: string) => {
    setBusy(packId);
    setError(undefined);
    setDone('');
    try {
      const r = await post<{ purchase: Purchase; balanceUsd: number | null }>('/billing/purchases', { packId });
      setDone(
        r.purchase.status === 'completed'
          ? `Pack ${packId} bought: ${fmtUsd(r.purchase.tokensUsd)} of tokens added.`
          : `Pack ${packId} ordered; the balance is credited once the payment is confirmed.`,
      );
      await billing.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy('');
    }
  };

  return (
    <>
      <PageHead title="Billing" intro="Cloud measurements are paid with tokens, priced per second of capture." />
      {done ? <Note tone="success">{done}</Note> : null}
      <ErrorNote error={error ?? billing.error} onRetry={billing.error ? billing.reload : undefined} />
      {billing.loading && !b ? <Loading /> : null}
      {b ? (
        <>
          <div class="grid-2 top">
            <section class="card stat" aria-label="Token balance">
              <div class="meter-label">Token balance</div>
              <p class="big">{b.balanceUsd === null ? 'Unmetered' : fmtUsd(b.balanceUsd)}</p>
              <p class="muted small">
                {b.balanceUsd === null
                  ? 'This organization is not charged for tokens: measurements are limited only by the keys’ caps.'
                  : 'Cloud measurements draw on this balance; when it cannot cover one, calls are refused (insufficient_tokens).'}
              </p>
            </section>
            <Section title="Rates">
              <table class="compact">
                <caption class="sr-only">Token rates per second of capture</caption>
                <tbody>
                  <tr>
                    <th scope="row">Core metrics</th>
                    <td class="num">{`${fmtUsd(b.pricing.rates.core.perSecondUsd, 4)} / s`}</td>
                  </tr>
                  {Object.entries(b.pricing.rates.features).map(([f, r]) => (
                    <tr key={f}>
                      <th scope="row">{`+ ${FEATURE_WORDS[f] ?? f}`}</th>
                      <td class="num">{`${fmtUsd(r.perSecondUsd, 4)} / s`}</td>
                    </tr>
                  ))}
                  {b.pricing.rates.onDeviceSubmission ? (
                    <tr>
                      <th scope="row">On-device submission</th>
                      <td class="num">
                        {b.pricing.rates.onDeviceSubmission.perMeasurementUsd === 0
                          ? 'Free'
                          : fmtUsd(b.pricing.rates.onDeviceSubmission.perMeasurementUsd)}
                      </td>
                    </tr>
                  ) : null}
                </tbody>
              </table>
              {(b.pricing.notes ?? []).map((t) => (
                <p key={t} class="muted small">
                  {t}
                </p>
              ))}
            </Section>
          </div>
          <Section title="Token packs">
            {!b.purchase.enabled ? (
              <p class="muted">Buying packs is not enabled on this server. Ask your operator to credit your balance.</p>
            ) : !metered ? (
              <p class="muted">
                This organization is unmetered: it needs no packs (your operator can give it a token balance).
              </p>
            ) : null}
            <ul class="packs">
              {b.pricing.packs.map((p) => (
                <li key={p.id} class="pack">
                  <div class="pack-name">{p.id[0].toUpperCase() + p.id.slice(1)}</div>
                  <div class="big">{fmtUsd(p.priceUsd, 0)}</div>
                  <div class="muted small">
                    {`${fmtUsd(p.tokensUsd, 0)} of tokens`}
                    {p.tokensUsd > p.priceUsd ? ` (+${Math.round((p.tokensUsd / p.priceUsd - 1) * 100)} %)` : ''}
                  </div>
                  <button
                    type="button"
                    class="btn btn-primary"
                    aria-label={`Buy the ${p.id} pack`}
                    disabled={!b.purchase.enabled || !metered || busy !== ''}
                    onClick={() => buy(p.id)}
                  >
                    {busy === p.id ? 'Buying…' : 'Buy'}
                  </button>
                </li>
              ))}
            </ul>
          </Section>
          <Section title="Spend by month">
            {b.spendByMonth.length ? (
              <table>
                <caption class="sr-only">Spend by month, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Month</th>
                    <th scope="col" class="num">
                      Tokens
                    </th>
                    <th scope="col" class="num">
                      Cloud time
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {b.spendByMonth.map((s) => (
                    <tr key={s.month}>
                      <td>{monthLabel(s.month)}</td>
                      <td class="num">{fmtUsd(s.tokensUsd)}</td>
                      <td class="num">{fmtSeconds(s.cloudSeconds)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : (
              <Empty title="No spend yet">Cloud measurements appear here month by month.</Empty>
            )}
          </Section>
          {b.purchases && b.purchases.length ? (
            <Section title="Purchases">
              <table>
                <caption class="sr-only">Recent purchases</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Pack</th>
                    <th scope="col" class="num">
                      Price
                    </th>
                    <th scope="col" class="num">
                      Tokens
                    </th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {b.purchases.map((p) => (
                    <tr key={p.id}>
                      <td class="small">{fmtDateTime(p.createdAt)}</td>
                      <td>{p.packId}</td>
                      <td class="num">{fmtUsd(p.priceUsd)}</td>
                      <td class="num">{fmtUsd(p.tokensUsd)}</td>
                      <td>
                        <Badge tone={p.status === 'completed' ? 'good' : p.status === 'failed' ? 'bad' : 'warn'}>
                          {p.status}
                        </Badge>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
        </>
      ) : null}
    </>
  );
}
