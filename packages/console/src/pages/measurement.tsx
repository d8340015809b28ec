/**
 * One measurement (GET /api/v1/measurements/{id}): every metric, quality, the wellness assessment,
 * and the raw PPG trace plotted when it was persisted (the advanced opt-in, spec "Measurement").
 */
import { ABSENT_WORDS, emotionWords, gazeWords, whyAbsent } from '@vitals/protocol';
import { get } from '../api/client.js';
import type { Measurement } from '../api/types.js';
import { WaveChart } from '../charts/line-chart.js';
import { Badge, ErrorNote, Link, Loading, PageHead, Section } from '../components/ui.js';
import { fmtDateTime, fmtNumber } from '../format.js';
import { useLoad } from '../hooks.js';
import { METRIC_WORDS, POSITION_WORDS, REASON_WORDS, qualityTone } from './measurement-words.js';

interface AssessedMetric {
  metric: string;
  value: number;
  unit: string;
  personal?: { position: string; low: number; high: number; median: number };
  reference: { position: string; low: number; high: number };
  flags: string[];
}
interface Assessment {
  basis: string;
  status: string;
  metrics: AssessedMetric[];
  flags: string[];
  summary: string;
  disclaimers: string[];
}

const n = (v: number | null | undefined, unit: string, digits = 0) =>
  v == null ? '—' : `${fmtNumber(v, digits)} ${unit}`;

/** Why HRV or stress is absent (@vitals/protocol `whyAbsent`), in the words every view uses. */
function absentNote(m: Measurement, metric: 'hrv' | 'stress'): string | undefined {
  const why = whyAbsent(m, metric);
  return why ? ABSENT_WORDS[why] : undefined;
}

function metricRows(m: Measurement): Array<[string, string, string?]> {
  const conf = (c: number | undefined | null) => (c == null ? undefined : `confidence ${fmtNumber(c, 2)}`);
  const hrvNote = m.hrv ? undefined : absentNote(m, 'hrv');
  return [
    ['Heart rate', n(m.cardiac?.heartRate?.value, 'bpm'), conf(m.cardiac?.heartRate?.confidence)],
    ['Breathing rate', n(m.respiratory?.breathingRate?.value, 'brpm'), conf(m.respiratory?.breathingRate?.confidence)],
    ['HRV SDNN', n(m.hrv?.sdnnMs, 'ms', 1), hrvNote],
    ['HRV RMSSD', n(m.hrv?.rmssdMs, 'ms', 1), hrvNote],
    ['HRV pNN50', n(m.hrv?.pnn50Pct, '%', 1), hrvNote],
    [
      'Stress',
      m.stress ? `${fmtNumber(m.stress.index)} (${m.stress.level.replace('_', ' ')})` : '—',
      m.stress ? undefined : absentNote(m, 'stress'),
    ],
    [
      'Blood pressure (beta)',
      m.bloodPressure
        ? `${fmtNumber(m.bloodPressure.systolicMmHg)}/${fmtNumber(m.bloodPressure.diastolicMmHg)} mmHg`
        : '—',
      conf(m.bloodPressure?.confidence),
    ],
    ['SpO2 (beta)', n(m.spo2?.value, '%'), conf(m.spo2?.confidence)],
  ];
}

/** Emotion and gaze, where they were ordered and analysed (read from the face's images, whatever the quality). */
function auxRows(m: Measurement): Array<[string, string, string?]> {
  const rows: Array<[string, string, string?]> = [];
  const emotion = emotionWords(m.emotion);
  if (emotion) rows.push(['Emotion', emotion]);
  const gaze = gazeWords(m.gaze);
  if (gaze) rows.push(['Gaze', gaze]);
  return rows;
}

export function MeasurementPage(props: { id: string }) {
  const {
    data: m,
    error,
    loading,
    reload,
  } = useLoad(() => get<Measurement>(`/measurements/${encodeURIComponent(props.id)}`), [props.id]);
  const assessment = m?.assessment as Assessment | undefined;
  return (
    <>
      <p class="crumbs">
        <Link to="/users">All users</Link>
        {m?.userRef ? (
          <>
            {' '}
            <span aria-hidden="true">›</span>{' '}
            <Link to={`/users/${encodeURIComponent(m.keyId)}/${encodeURIComponent(m.userRef)}`}>{m.userRef}</Link>
          </>
        ) : null}{' '}
        <span aria-hidden="true">›</span> <span class="mono">{props.id}</span>
      </p>
      <PageHead title="Measurement" intro={m ? `${fmtDateTime(m.createdAt)} · ${m.id}` : props.id} />
      <ErrorNote error={error} onRetry={reload} />
      {loading && !m ? <Loading /> : null}
      {m ? (
        <>
          <div class="grid-2">
            <Section title="Metrics">
              <dl class="metrics">
                {[...metricRows(m), ...auxRows(m)].map(([k, v, extra]) => (
                  <div key={k}>
                    <dt>{k}</dt>
                    <dd>
                      <span class="metric-value">{v}</span>
                      {extra ? <span class="muted small"> {extra}</span> : null}
                    </dd>
                  </div>
                ))}
              </dl>
            </Section>
            <Section title="Quality and origin">
              <dl class="metrics">
                <div>
                  <dt>Quality</dt>
                  <dd>
                    <Badge tone={qualityTone(m.quality?.level)}>{m.quality?.level ?? '—'}</Badge>{' '}
                    <span class="muted small">
                      {m.quality
                        ? `score ${fmtNumber(m.quality.score, 2)}, ${m.quality.usable ? 'usable' : 'not usable'}`
                        : ''}
                    </span>
                  </dd>
                </div>
                {m.quality?.reasons?.length ? (
                  <div>
                    <dt>Why</dt>
                    <dd>
                      <ul class="reasons" aria-label="Quality reasons">
                        {m.quality.reasons.map((r) => (
                          <li key={r.code}>
                            <strong>{REASON_WORDS[r.code] ?? r.code}</strong>
                            <span class="muted small"> {r.hint}</span>
                          </li>
                        ))}
                      </ul>
                    </dd>
                  </div>
                ) : null}
                <div>
                  <dt>Origin</dt>
                  <dd>
                    {m.origin === 'cloud' ? 'Cloud (attested by the service)' : 'On device (submitted, not attested)'}
                  </dd>
                </div>
                <div>
                  <dt>Complete</dt>
                  <dd>{m.isComplete === false ? 'No' : 'Yes'}</dd>
                </div>
                <div>
                  <dt>Duration</dt>
                  <dd>{n(m.durationSec, 's', 1)}</dd>
                </div>
                <div>
                  <dt>Source</dt>
                  <dd>{m.source}</dd>
                </div>
                <div>
                  <dt>Key</dt>
                  <dd class="mono small">{m.keyId}</dd>
                </div>
                <div>
                  <dt>Request id</dt>
                  <dd class="mono small">{m.requestId}</dd>
                </div>
                {m.sdkVersion ? (
                  <div>
                    <dt>SDK</dt>
                    <dd class="mono small">{m.sdkVersion}</dd>
                  </div>
                ) : null}
                {m.modelsVersion ? (
                  <div>
                    <dt>Models</dt>
                    <dd class="mono small">{m.modelsVersion}</dd>
                  </div>
                ) : null}
              </dl>
            </Section>
          </div>
          {assessment ? (
            <Section title="Assessment">
              <p>{assessment.summary}</p>
              {assessment.metrics.length ? (
                <div class="table-wrap">
                  <table>
                    <caption class="sr-only">Assessment per metric</caption>
                    <thead>
                      <tr>
                        <th scope="col">Metric</th>
                        <th scope="col" class="num">
                          Value
                        </th>
                        <th scope="col">Personal corridor</th>
                        <th scope="col">Reference range</th>
                      </tr>
                    </thead>
                    <tbody>
                      {assessment.metrics.map((a) => (
                        <tr key={a.metric}>
                          <td>{METRIC_WORDS[a.metric] ?? a.metric}</td>
                          <td class="num">{`${fmtNumber(a.value, 1)} ${a.unit}`}</td>
                          <td>
                            {a.personal ? (
                              `${POSITION_WORDS[a.personal.position] ?? a.personal.position} (${fmtNumber(a.personal.low, 1)} – ${fmtNumber(a.personal.high, 1)})`
                            ) : (
                              <span class="muted">No baseline yet</span>
                            )}
                          </td>
                          <td>{`${POSITION_WORDS[a.reference.position] ?? a.reference.position} (${fmtNumber(a.reference.low)} – ${fmtNumber(a.reference.high)})`}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              ) : null}
              {assessment.disclaimers.map((d) => (
                <p key={d} class="muted small">
                  {d}
                </p>
              ))}
            </Section>
          ) : null}
          <Section title="Raw PPG signal">
            {m.raw && m.raw.ppgSignal.length > 1 ? (
              <>
                <WaveChart values={m.raw.ppgSignal} sampleRateHz={m.raw.sampleRateHz} label="Raw PPG signal" />
                <p class="muted small">
                  {`${m.raw.ppgSignal.length} samples at ${fmtNumber(m.raw.sampleRateHz, 1)} Hz; ${m.raw.rrIntervalsMs.length} beat-to-beat intervals.`}
                </p>
              </>
            ) : (
              <p class="muted">
                Not persisted for this measurement. The raw block is kept only when the client opted in
                (includeAdvanced).
              </p>
            )}
          </Section>
        </>
      ) : null}
    </>
  );
}
