/** Overview (GET /api/v1/overview): this month's use against the caps, activity and refusals. */
import { useState } from 'preact/hooks';
import { get } from '../api/client.js';
import type { Overview } from '../api/types.js';
import { BarChart } from '../charts/bar-chart.js';
import { HBarChart } from '../charts/bar-chart.js';
import { Meter, QualityMix } from '../charts/meter.js';
import { Empty, ErrorNote, Field, Link, Loading, PageHead, Section } from '../components/ui.js';
import { fmtSeconds, fmtUsd, monthLabel, monthOf } from '../format.js';
import { useLoad } from '../hooks.js';
import { USAGE_ERROR_WORDS } from '../words.js';

/** Every day of the month, zero where the server sent none (so gaps show as gaps). */
function daysOf(month: string, counts: Array<{ day: string; count: number }>) {
  const [y, m] = month.split('-').map(Number);
  const n = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const byDay = new Map(counts.map((c) => [c.day, c.count]));
  return Array.from({ length: n }, (_, i) => {
    const day = `${month}-${String(i + 1).padStart(2, '0')}`;
    const d = i + 1;
    return { label: day, value: byDay.get(day) ?? 0, tick: d === 1 || d % 5 === 0 ? String(d) : '' };
  });
}

/** Caps are per key (spec "Rate limits"): each key's use against its own caps. */
function ByKey(props: { keys: NonNullable<Overview['keys']> }) {
  const share = (used: number, cap: number | null) => (cap ? ` (${Math.round((used / cap) * 100)} %)` : '');
  return (
    <Section title="By key">
      <div class="table-wrap">
        <table>
          <caption class="sr-only">This month's use by key</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col" class="num">
                Cloud time
              </th>
              <th scope="col" class="num">
                Monthly quota
              </th>
              <th scope="col" class="num">
                Token spend
              </th>
              <th scope="col" class="num">
                Monthly cap
              </th>
            </tr>
          </thead>
          <tbody>
            {props.keys.map((k) => (
              <tr key={k.keyId}>
                <td>
                  {k.name || 'Unnamed key'} <code class="muted tiny">{k.keyId}</code>
                  {k.status !== 'active' ? <span class="muted small"> (disabled)</span> : null}
                </td>
                <td class="num">{`${fmtSeconds(k.cloudSeconds)}${share(k.cloudSeconds, k.quotaSecondsMonth)}`}</td>
                <td class="num">
                  {k.quotaSecondsMonth == null ? <span class="muted">None</span> : fmtSeconds(k.quotaSecondsMonth)}
                </td>
                <td class="num">{`${fmtUsd(k.tokensUsd)}${share(k.tokensUsd, k.tokenQuotaMonthUsd)}`}</td>
                <td class="num">
                  {k.tokenQuotaMonthUsd == null ? <span class="muted">None</span> : fmtUsd(k.tokenQuotaMonthUsd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

export function OverviewPage() {
  const [month, setMonth] = useState(monthOf(Date.now()));
  const { data, error, loading, reload } = useLoad(() => get<Overview>('/overview', { month }), [month]);

  return (
    <>
      <PageHead
        title="Overview"
        intro={`Your organization's use in ${monthLabel(month)} (months are counted in UTC).`}
        actions={
          <Field label="Month">
            <input
              type="month"
              value={month}
              max={monthOf(Date.now())}
              onChange={(e) => {
                const v = (e.currentTarget as HTMLInputElement).value;
                if (/^\d{4}-\d{2}$/.test(v)) setMonth(v);
              }}
            />
          </Field>
        }
      />
      <ErrorNote error={error} onRetry={reload} />
      {loading && !data ? <Loading /> : null}
      {data ? (
        <>
          <div class="grid-3">
            <section class="card stat" aria-label="Cloud seconds">
              <Meter
                label="Cloud seconds"
                used={data.cloudSeconds.used}
                cap={data.cloudSeconds.quota}
                format={fmtSeconds}
              />
            </section>
            <section class="card stat" aria-label="Token spend">
              <Meter
                label="Token spend"
                used={data.tokenSpendUsd.used}
                cap={data.tokenSpendUsd.cap}
                format={(v) => fmtUsd(v)}
              />
            </section>
            <section class="card stat" aria-label="Token balance">
              <div class="meter-head">
                <span class="meter-label">Token balance</span>
              </div>
              <p class="big">{data.balanceUsd === null ? 'Unmetered' : fmtUsd(data.balanceUsd)}</p>
              <p class="meter-foot">
                {data.balanceUsd === null ? (
                  'This server does not charge tokens.'
                ) : (
                  <Link to="/billing">Buy token packs</Link>
                )}
              </p>
            </section>
          </div>
          <Section title="Measurements per day">
            {data.measurementsPerDay.some((d) => d.count > 0) ? (
              <BarChart
                bars={daysOf(data.month, data.measurementsPerDay)}
                label="Measurements per day"
                unit="measurements"
              />
            ) : (
              <Empty title="No measurements this month">
                Measurements stored with your keys appear here day by day.
              </Empty>
            )}
          </Section>
          {data.keys && data.keys.length ? <ByKey keys={data.keys} /> : null}
          <div class="grid-2">
            <Section title="Quality mix">
              {data.qualityMix.good + data.qualityMix.fair + data.qualityMix.poor > 0 ? (
                <QualityMix {...data.qualityMix} />
              ) : (
                <Empty title="No measurements yet" />
              )}
            </Section>
            <Section title="Refused calls by cause">
              {data.refusalsByCode.length ? (
                <HBarChart
                  label="Refused calls by usage-log code"
                  rows={[...data.refusalsByCode]
                    .sort((a, b) => b.count - a.count)
                    .map((r) => ({
                      label: USAGE_ERROR_WORDS[r.errorCode] ?? r.errorCode,
                      code: r.errorCode,
                      value: r.count,
                    }))}
                />
              ) : (
                <Empty title="No refused calls">
                  Calls refused by the signature layer this month would show here, by cause.
                </Empty>
              )}
            </Section>
          </div>
        </>
      ) : null}
    </>
  );
}
