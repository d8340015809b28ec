/** Stored measurements, per-user history and the rows the baseline is computed from. */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { prepare } from './compiled.js';
import type { Measurement, MeasurementRaw } from '../domain/measurement.js';

export interface StoredMeasurement {
  doc: Measurement;
  raw: MeasurementRaw | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The per-metric columns (indexed copies of the document's values; the baseline reads these). */
const METRIC_COLUMNS = [
  'heart_rate_bpm',
  'rmssd_ms',
  'sdnn_ms',
  'breathing_rate',
  'stress_index',
  'systolic_mmhg',
  'diastolic_mmhg',
  'spo2_pct',
] as const satisfies ReadonlyArray<keyof Database['measurements']>;

const COLUMNS = [
  'id',
  'key_id',
  'org_id',
  'user_ref',
  'request_id',
  'origin',
  'created_at',
  'doc',
  'raw',
  'quality_level',
  'quality_score',
  'usable',
  'is_complete',
  ...METRIC_COLUMNS,
] as const satisfies ReadonlyArray<keyof Database['measurements']>;

const insertRow = prepare(COLUMNS, (db, p) => db.insertInto('measurements').values(p));

export async function insertMeasurement(
  db: Kysely<Database>,
  m: Measurement,
  raw: MeasurementRaw | null,
  orgId: string,
  createdAt: number,
): Promise<void> {
  await insertRow.execute(db, measurementRow(m, raw, orgId, createdAt));
}

/** The `measurements` row of a measurement (its document, and the columns queries filter on). */
export function measurementRow(
  m: Measurement,
  raw: MeasurementRaw | null,
  orgId: string,
  createdAt: number,
): Database['measurements'] {
  const q = m.quality;
  return {
    id: m.id,
    key_id: m.keyId,
    org_id: orgId,
    user_ref: m.userRef ?? null,
    request_id: m.requestId,
    origin: m.origin,
    created_at: createdAt,
    doc: JSON.stringify(m),
    raw: raw ? JSON.stringify(raw) : null,
    quality_level: q?.level ?? null,
    quality_score: num(q?.score),
    usable: q?.usable ? 1 : 0,
    is_complete: m.isComplete ? 1 : 0,
    heart_rate_bpm: num(m.cardiac?.heartRate?.value),
    rmssd_ms: num(m.hrv?.rmssdMs),
    sdnn_ms: num(m.hrv?.sdnnMs),
    breathing_rate: num(m.respiratory?.breathingRate?.value),
    stress_index: num(m.stress?.index),
    systolic_mmhg: num(m.bloodPressure?.systolicMmHg),
    diastolic_mmhg: num(m.bloodPressure?.diastolicMmHg),
    spo2_pct: num(m.spo2?.value),
  };
}

/** Whose measurements a read may see: one key's (the API), or an organization's (the console). */
export type MeasurementScope = { keyId: string } | { orgId: string; keyId?: string };

/**
 * One measurement of one key (`scope` a key id) or of one organization; another key's or
 * organization's id is indistinguishable from an unknown one.
 */
export async function getMeasurement(
  db: Kysely<Database>,
  scope: string | MeasurementScope,
  id: string,
): Promise<StoredMeasurement | undefined> {
  const s = typeof scope === 'string' ? { keyId: scope } : scope;
  let q = db.selectFrom('measurements').select(['doc', 'raw']).where('id', '=', id);
  if ('orgId' in s) q = q.where('org_id', '=', s.orgId);
  if (s.keyId !== undefined) q = q.where('key_id', '=', s.keyId);
  const row = await q.executeTakeFirst();
  return (
    row && {
      doc: JSON.parse(row.doc) as Measurement,
      raw: row.raw ? (JSON.parse(row.raw) as MeasurementRaw) : null,
    }
  );
}

export interface UserSummaryRow {
  keyId: string;
  userRef: string;
  measurements: number;
  firstSeenAt: number;
  lastSeenAt: number;
  avgQuality: number | null;
}

/**
 * End users of a key, or of an organization's keys (a user is a key's `userRef`), most recently
 * active first (CLARIFICATIONS 11).
 */
export async function listUsers(
  db: Kysely<Database>,
  scope: string | MeasurementScope,
  page: number,
  perPage: number,
): Promise<{ items: UserSummaryRow[]; total: number }> {
  const s = typeof scope === 'string' ? { keyId: scope } : scope;
  let base = db.selectFrom('measurements').where('user_ref', 'is not', null);
  if ('orgId' in s) base = base.where('org_id', '=', s.orgId);
  if (s.keyId !== undefined) base = base.where('key_id', '=', s.keyId);
  const rows = await base
    .select((eb) => [
      'key_id',
      'user_ref',
      eb.fn.countAll<number>().as('n'),
      eb.fn.min('created_at').as('first'),
      eb.fn.max('created_at').as('last'),
      eb.fn.avg<number>('quality_score').as('avg_q'),
    ])
    .groupBy(['key_id', 'user_ref'])
    .orderBy(sql`max(created_at)`, 'desc')
    .orderBy('key_id', 'asc')
    .orderBy('user_ref', 'asc')
    .limit(perPage)
    .offset((page - 1) * perPage)
    .execute();
  const distinct =
    'orgId' in s && s.keyId === undefined ? sql`distinct key_id || ':' || user_ref` : sql`distinct user_ref`;
  const totalRow = await base.select((eb) => eb.fn.count<number>(distinct).as('total')).executeTakeFirst();
  return {
    items: rows.map((r) => ({
      keyId: r.key_id,
      userRef: r.user_ref as string,
      measurements: Number(r.n),
      firstSeenAt: Number(r.first),
      lastSeenAt: Number(r.last),
      avgQuality: r.avg_q === null || r.avg_q === undefined ? null : Number(r.avg_q),
    })),
    total: Number(totalRow?.total ?? 0),
  };
}

/** A user's measurements, newest first, optionally within [from, to] (epoch ms). */
export async function listUserMeasurements(
  db: Kysely<Database>,
  keyId: string,
  userRef: string,
  opts: { page: number; perPage: number; from?: number; to?: number },
): Promise<{ items: Measurement[]; total: number }> {
  let base = db.selectFrom('measurements').where('key_id', '=', keyId).where('user_ref', '=', userRef);
  if (opts.from !== undefined) base = base.where('created_at', '>=', opts.from);
  if (opts.to !== undefined) base = base.where('created_at', '<=', opts.to);
  const rows = await base
    .select(['doc'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.perPage)
    .offset((opts.page - 1) * opts.perPage)
    .execute();
  const totalRow = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirst();
  return { items: rows.map((r) => JSON.parse(r.doc) as Measurement), total: Number(totalRow?.total ?? 0) };
}

export type BaselineSourceRow = Record<(typeof METRIC_COLUMNS)[number], number | null>;

/**
 * Usable measurements (complete, quality good or fair) of the window, at most `cap` most recent
 * (spec: GET /sdk/v1/users/{ref}/baseline).
 */
export async function baselineRows(
  db: Kysely<Database>,
  keyId: string,
  userRef: string,
  since: number,
  cap: number,
): Promise<BaselineSourceRow[]> {
  return db
    .selectFrom('measurements')
    .select(METRIC_COLUMNS)
    .where('key_id', '=', keyId)
    .where('user_ref', '=', userRef)
    .where('created_at', '>=', since)
    .where('is_complete', '=', 1)
    .where('quality_level', 'in', ['good', 'fair'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(cap)
    .execute();
}
