/** The per-key usage log (spec: Usage-log row; GET /sdk/v1/logs keyset paging). */
import type { Kysely } from 'kysely';
import type { UsageLogRow } from '@vitals/protocol';
import type { Database } from './schema.js';
import { prepare } from './compiled.js';

/** A usage-log row as the spec's table defines it (protocol schema `UsageLogRow`). */
export type UsageRow = UsageLogRow;

const insertUsage = prepare(
  [
    'id',
    'keyId',
    'time',
    'endpoint',
    'method',
    'status',
    'latencyMs',
    'requestId',
    'error',
    'errorCode',
    'qualityLevel',
  ],
  (db, p) =>
    db.insertInto('usage_log').values({
      id: p.id,
      key_id: p.keyId,
      time: p.time,
      endpoint: p.endpoint,
      method: p.method,
      status: p.status,
      latency_ms: p.latencyMs,
      request_id: p.requestId,
      error: p.error,
      error_code: p.errorCode,
      quality_level: p.qualityLevel,
    }),
);

export async function appendUsage(db: Kysely<Database>, keyId: string | null, row: UsageRow): Promise<void> {
  await insertUsage.execute(db, { ...row, keyId });
}

/** The `usage_log` row of a usage-log entry, for a write that stores it with other rows. */
export function usageLogRow(keyId: string | null, row: UsageRow): Database['usage_log'] {
  return {
    id: row.id,
    key_id: keyId,
    time: row.time,
    endpoint: row.endpoint,
    method: row.method,
    status: row.status,
    latency_ms: row.latencyMs,
    request_id: row.requestId,
    error: row.error,
    error_code: row.errorCode,
    quality_level: row.qualityLevel,
  };
}

/** Rows strictly after (time, id), oldest first. */
export async function listUsage(
  db: Kysely<Database>,
  keyId: string,
  after: { time: number; id: string; inclusiveTime: boolean },
  limit: number,
): Promise<UsageRow[]> {
  let q = db.selectFrom('usage_log').selectAll().where('key_id', '=', keyId);
  q = after.inclusiveTime
    ? q.where('time', '>=', after.time)
    : q.where((eb) =>
        eb.or([eb('time', '>', after.time), eb.and([eb('time', '=', after.time), eb('id', '>', after.id)])]),
      );
  const rows = await q.orderBy('time', 'asc').orderBy('id', 'asc').limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    time: Number(r.time),
    endpoint: r.endpoint,
    method: r.method,
    status: r.status as UsageRow['status'],
    latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
    requestId: r.request_id,
    error: r.error,
    errorCode: r.error_code,
    qualityLevel: r.quality_level,
  }));
}

export interface OrgUsageFilter {
  orgId: string;
  keyId?: string;
  status?: string;
  errorCode?: string;
  from?: number;
  to?: number;
  /** Newest first, rows strictly older than (time, id). */
  before?: { time: number; id: string };
  /** Oldest first, rows strictly newer than (time, id) (the console's live tail). */
  after?: { time: number; id: string };
  limit: number;
}

/** The usage log of an organization's keys (the console's Usage page), with the key of each row. */
export async function listOrgUsage(
  db: Kysely<Database>,
  f: OrgUsageFilter,
): Promise<Array<UsageRow & { keyId: string }>> {
  let q = db
    .selectFrom('usage_log')
    .selectAll()
    .where('key_id', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('org_id', '=', f.orgId));
  if (f.keyId) q = q.where('key_id', '=', f.keyId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.errorCode) q = q.where('error_code', '=', f.errorCode);
  if (f.from !== undefined) q = q.where('time', '>=', f.from);
  if (f.to !== undefined) q = q.where('time', '<=', f.to);
  const { before, after } = f;
  if (after) {
    q = q
      .where((eb) =>
        eb.or([eb('time', '>', after.time), eb.and([eb('time', '=', after.time), eb('id', '>', after.id)])]),
      )
      .orderBy('time', 'asc')
      .orderBy('id', 'asc');
  } else {
    if (before)
      q = q.where((eb) =>
        eb.or([eb('time', '<', before.time), eb.and([eb('time', '=', before.time), eb('id', '<', before.id)])]),
      );
    q = q.orderBy('time', 'desc').orderBy('id', 'desc');
  }
  const rows = await q.limit(f.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    keyId: r.key_id as string,
    time: Number(r.time),
    endpoint: r.endpoint,
    method: r.method,
    status: r.status as UsageRow['status'],
    latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
    requestId: r.request_id,
    error: r.error,
    errorCode: r.error_code,
    qualityLevel: r.quality_level,
  }));
}
