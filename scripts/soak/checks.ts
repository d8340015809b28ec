/**
 * What the soak asserts once the load has drained (issue 19), from what clients were told
 * (load.ts records) against the store: every accepted job settles exactly once, no measurement is
 * lost or stored twice, every `auto` capture whose socket died is stored through the fallback,
 * metering equals the sum of settled jobs, and RSS returns to its baseline.
 */
import type { SoakDb } from './env.js';
import type { Records } from './load.js';

const TERMINAL = `('completed', 'aborted', 'failed', 'expired')`;
/** RSS may end at most this far above its baseline (allocator slack, caches warmed by the run). */
const RSS_SLACK = 1.2;

export async function check(
  db: SoakDb,
  r: Records,
  info: { rssBaseline: number; rssEnd: number; faults: string[]; uptimeSec: number },
) {
  const problems: string[] = [];
  const jobIds = r.jobs.flatMap((j) => (j.jobId ? [j.jobId] : []));
  const sessionIds = r.captures.map((c) => c.sessionId);
  const accepted = [...jobIds, ...sessionIds];

  // Every accepted job and session reaches a terminal status (waits up to 3 minutes).
  let open: Array<{ id: string; status: string }> = [];
  for (let i = 0; i < 180; i++) {
    open = await db.query(`select id, status from cloud_jobs where id = any($1) and status not in ${TERMINAL}`, [
      accepted,
    ]);
    if (open.length === 0) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  for (const j of open) problems.push(`job ${j.id} still ${j.status}`);
  const known = await db.query<{ id: string }>(`select id from cloud_jobs where id = any($1)`, [accepted]);
  if (known.length !== new Set(accepted).size) problems.push(`${accepted.length - known.length} accepted jobs unknown`);

  // Settled exactly once: a completed job has its one measurement; nothing is stored twice.
  const missing = await db.query(
    `select j.id from cloud_jobs j left join measurements m on m.id = j.measurement_id
      where j.status = 'completed' and m.id is null`,
  );
  for (const j of missing) problems.push(`completed job ${j.id} has no measurement`);
  const twice = await db.query(
    `select request_id, count(*)::int as n from measurements group by request_id having count(*) > 1`,
  );
  for (const t of twice) problems.push(`request ${t.request_id} stored ${t.n} measurements`);

  // Captures: each one the SDK reported is stored; a capture whose socket died came through the fallback.
  const lostCaptures = r.captures.filter((c) => !c.measurementId);
  for (const c of lostCaptures) problems.push(`capture ${c.sessionId} ended without a measurement: ${c.error}`);
  const captureIds = r.captures.flatMap((c) => (c.measurementId ? [c.measurementId] : []));
  const storedCaptures = await db.query<{ id: string }>(`select id from measurements where id = any($1)`, [captureIds]);
  if (storedCaptures.length !== captureIds.length)
    problems.push(`${captureIds.length - storedCaptures.length} captures reported but not stored`);
  const fellBack = r.captures.filter((c) => c.fellBack);
  for (const c of fellBack.filter((c) => c.via !== 'batch' || !c.measurementId))
    problems.push(`capture ${c.sessionId} lost its socket but was not stored through the fallback`);

  // Signed calls: told 201 → exactly one row; no answer → at most one; refused → none.
  const rows = await db.query<{ user_ref: string; n: number }>(
    `select user_ref, count(*)::int as n from measurements where user_ref like 'soak-api-%' group by user_ref`,
  );
  const perRef = new Map(rows.map((x) => [x.user_ref, x.n]));
  for (const c of r.calls) {
    const n = perRef.get(c.userRef) ?? 0;
    if (c.outcome === 'stored' && n !== 1) problems.push(`call ${c.userRef} answered 201 but ${n} rows`);
    if (c.outcome === 'refused' && n !== 0) problems.push(`call ${c.userRef} refused (${c.status}) but ${n} rows`);
    if (c.outcome === 'unknown' && n > 1) problems.push(`call ${c.userRef} stored ${n} times`);
  }

  // Metering: the month's seconds are the sum over metered (completed) jobs, each metered once.
  const [m] = await db.query(
    `select (select coalesce(sum(cloud_seconds), 0) from usage_month)::float as metered,
            (select coalesce(sum(seconds_processed), 0) from cloud_jobs where metered = 1)::float as settled,
            (select count(*) from cloud_jobs where metered = 1 and status <> 'completed')::int as wrong_status,
            (select count(*) from cloud_jobs where metered = 0 and status = 'completed')::int as unmetered`,
  );
  if (Math.abs(m.metered - m.settled) > 1e-6) problems.push(`metered ${m.metered} s, settled jobs ${m.settled} s`);
  if (m.wrong_status > 0) problems.push(`${m.wrong_status} metered jobs not completed`);
  if (m.unmetered > 0) problems.push(`${m.unmetered} completed jobs not metered`);

  if (!(info.rssEnd <= info.rssBaseline * RSS_SLACK))
    problems.push(`RSS ${info.rssEnd} MB, baseline ${info.rssBaseline} MB`);

  const [status] = await db.query(
    `select count(*) filter (where status = 'completed')::int as completed,
            count(*) filter (where status = 'failed')::int as failed,
            count(*) filter (where status = 'aborted')::int as aborted, count(*)::int as total
       from cloud_jobs`,
  );
  return {
    inputs: {
      captures: r.captures.length,
      capturesViaFallback: r.captures.filter((c) => c.via === 'batch').length,
      sessionsRefusedAtCreation: r.sessionsRefused,
      jobsAccepted: jobIds.length,
      jobsNeverAccepted: r.jobs.length - jobIds.length,
      apiCalls: r.calls.length,
      apiStored: r.calls.filter((c) => c.outcome === 'stored').length,
      apiRefused: r.calls.filter((c) => c.outcome === 'refused').length,
      apiNoAnswer: r.calls.filter((c) => c.outcome === 'unknown').length,
      refusalStatuses: countBy(r.calls.filter((c) => c.outcome === 'refused').map((c) => String(c.status))),
    },
    store: { ...status, meteredSeconds: m.metered, settledSeconds: m.settled },
    faults: info.faults,
    rssMb: { baseline: info.rssBaseline, end: info.rssEnd },
    losses: problems.length,
    problems: problems.slice(0, 50),
  };
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
