/**
 * One end user: heart rate over time against the baseline corridor (median ± 2·MAD, spec
 * "Baseline"), the baseline per metric, and the measurements, newest first.
 */
import { useState } from 'preact/hooks';
import { get } from '../api/client.js';
import type { Baseline, Measurement, Page } from '../api/types.js';
import { HistoryChart, type Point } from '../charts/line-chart.js';
import { Pager } from '../components/pager.js';
import { Badge, Empty, ErrorNote, Link, Loading, PageHead, Section } from '../components/ui.js';
import { fmtDateTime, fmtNumber } from '../format.js';
import { useLoad } from '../hooks.js';
import { METRIC_WORDS, qualityTone } from './measurement-words.js';

const PER_PAGE = 20;

export function UserPage(props: { keyId: string; userRef: string }) {
  const base = `/users/${encodeURIComponent(props.keyId)}/${encodeURIComponent(props.userRef)}`;
  const [page, setPage] = useState(1);
  const list = useLoad(() => get<Page<Measurement>>(`${base}/measurements`, { page, perPage: PER_PAGE }), [base, page]);
  // The chart shows the last 100 measurements whatever page the table is on.
  const history = useLoad(() => get<Page<Measurement>>(`${base}/measurements`, { page: 1, perPage: 100 }), [base]);
  const baseline = useLoad(() => get<Baseline>(`${base}/baseline`), [base]);

  const points: Point[] = (history.data?.items ?? [])
    .filter((m) => m.cardiac?.heartRate?.value != null)
    .map((m) => ({
      t: m.createdAt ?? 0,
      v: m.cardiac!.heartRate!.value as number,
      tone: m.quality?.level as Point['tone'],
      title: `${fmtDateTime(m.createdAt)}: ${fmtNumber(m.cardiac!.heartRate!.value as number)} bpm (${m.quality?.level})`,
    }));
  const hr = baseline.data?.status === 'ok' ? baseline.data.metrics.heartRateBpm : undefined;
  const items = list.data?.items ?? [];

  return (
    <>
      <p class="crumbs">
        <Link to="/users">All users</Link> <span aria-hidden="true">›</span> <span class="mono">{props.userRef}</span>
      </p>
      <PageHead
        title={`User ${props.userRef}`}
        intro={`Key ${props.keyId}. History and personal baseline over the last 30 days.`}
      />
      <ErrorNote error={list.error ?? history.error ?? baseline.error} onRetry={list.reload} />
      <Section title="Heart rate">
        {history.loading && !history.data ? <Loading /> : null}
        {history.data && points.length === 0 ? (
          <Empty title="No heart rate yet">Measurements with a usable heart rate show here.</Empty>
        ) : null}
        {points.length ? (
          <HistoryChart
            points={points}
            corridor={hr ? { low: hr.low, high: hr.high, median: hr.median } : null}
            label="Heart rate"
            unit="bpm"
          />
        ) : null}
        {baseline.data?.status === 'insufficient_data' ? (
          <p class="muted small">{`No baseline corridor yet: it needs ${baseline.data.minSamples} usable measurements in ${baseline.data.windowDays} days (${baseline.data.sampleCount} so far).`}</p>
        ) : null}
      </Section>
      {baseline.data?.status === 'ok' ? (
        <Section title="Baseline">
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Baseline per metric</caption>
              <thead>
                <tr>
                  <th scope="col">Metric</th>
                  <th scope="col" class="num">
                    Median
                  </th>
                  <th scope="col" class="num">
                    MAD
                  </th>
                  <th scope="col" class="num">
                    Corridor
                  </th>
                  <th scope="col" class="num">
                    Samples
                  </th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(baseline.data.metrics).map(([k, b]) => (
                  <tr key={k}>
                    <td>{METRIC_WORDS[k] ?? k}</td>
                    <td class="num">{`${fmtNumber(b.median, 1)} ${b.unit}`}</td>
                    <td class="num">{fmtNumber(b.mad, 1)}</td>
                    <td class="num">{`${fmtNumber(b.low, 1)} – ${fmtNumber(b.high, 1)}`}</td>
                    <td class="num">{b.samples}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {baseline.data.disclaimers.map((d) => (
            <p key={d} class="muted small">
              {d}
            </p>
          ))}
        </Section>
      ) : null}
      <Section title="Measurements">
        {list.loading && !list.data ? <Loading /> : null}
        {list.data && items.length === 0 ? <Empty title="No measurements" /> : null}
        {items.length ? (
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Measurements, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Quality</th>
                  <th scope="col" class="num">
                    Heart rate
                  </th>
                  <th scope="col" class="num">
                    Breathing
                  </th>
                  <th scope="col" class="num">
                    RMSSD
                  </th>
                  <th scope="col">Origin</th>
                  <th scope="col">
                    <span class="sr-only">Detail</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((m) => (
                  <tr key={m.id}>
                    <td class="nowrap small">{fmtDateTime(m.createdAt)}</td>
                    <td>
                      <Badge tone={qualityTone(m.quality?.level)}>{m.quality?.level ?? '—'}</Badge>
                    </td>
                    <td class="num">
                      {m.cardiac?.heartRate?.value == null
                        ? '—'
                        : `${fmtNumber(m.cardiac.heartRate.value as number)} bpm`}
                    </td>
                    <td class="num">
                      {m.respiratory?.breathingRate?.value == null
                        ? '—'
                        : `${fmtNumber(m.respiratory.breathingRate.value as number)} brpm`}
                    </td>
                    <td class="num">{m.hrv?.rmssdMs == null ? '—' : `${fmtNumber(m.hrv.rmssdMs as number)} ms`}</td>
                    <td class="small">{m.origin === 'cloud' ? 'Cloud (attested)' : 'On device'}</td>
                    <td>
                      <Link
                        to={`/measurements/${encodeURIComponent(m.id)}`}
                        label={`Details of the measurement of ${fmtDateTime(m.createdAt)}`}
                      >
                        Details
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <Pager page={page} perPage={PER_PAGE} total={list.data?.total ?? items.length} onPage={setPage} />
      </Section>
    </>
  );
}
