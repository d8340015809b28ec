/** What a key reads about itself and its users: users, baselines, the usage log, key facts, pages. */
import { Type, type Static } from '@sinclair/typebox';
import { Measurement } from './measurement.js';
import { Nullable, Num } from './shared.js';

export const UserSummary = Type.Object({
  userRef: Type.String(),
  measurements: Type.Integer(),
  firstSeenAt: Type.Integer(),
  lastSeenAt: Type.Integer(),
  avgQuality: Nullable(Num()),
});
export type UserSummary = Static<typeof UserSummary>;

export const BaselineMetric = Type.Object({
  median: Num(),
  mad: Num(),
  low: Num(),
  high: Num(),
  unit: Type.String(),
  samples: Type.Integer(),
});
export type BaselineMetric = Static<typeof BaselineMetric>;
export const Baseline = Type.Object({
  userRef: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('insufficient_data')]),
  windowDays: Type.Integer(),
  minSamples: Type.Integer(),
  sampleCount: Type.Integer(),
  metrics: Type.Record(Type.String(), BaselineMetric),
  disclaimers: Type.Array(Type.String()),
});
export type Baseline = Static<typeof Baseline>;

export const UsageLogRow = Type.Object({
  id: Type.String(),
  time: Type.Integer(),
  endpoint: Type.String(),
  method: Type.String(),
  status: Type.Union([Type.Literal('success'), Type.Literal('unauthorized'), Type.Literal('rate_limited')]),
  latencyMs: Nullable(Type.Integer()),
  requestId: Type.String(),
  error: Nullable(Type.String()),
  errorCode: Nullable(Type.String()),
  qualityLevel: Nullable(Type.String()),
});
export type UsageLogRow = Static<typeof UsageLogRow>;

/** `POST /sdk/v1/auth/test`: the key's facts (field names: docs/decisions.md). */
export const AuthTestResult = Type.Object({
  keyId: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  features: Type.Array(Type.String()),
  /** Epoch ms, or null for a key that does not expire. */
  expiresAt: Nullable(Type.Integer()),
  limits: Type.Object({ rateLimitPerMin: Type.Integer(), logsPerMin: Type.Integer() }),
  quotas: Type.Object({
    /** Calendar month (UTC) the usage figures cover, `YYYY-MM`. */
    month: Type.String(),
    quotaSecondsMonth: Nullable(Type.Integer()),
    cloudSecondsUsed: Num(),
    tokenQuotaMonthUsd: Nullable(Num()),
    tokensUsedUsd: Num(),
  }),
  /**
   * `unmetered`: the organization's balance was never set (or was cleared), so no balance is checked
   * and `tokenBalanceUsd` is null; usage is still recorded (CLARIFICATIONS 28).
   */
  metering: Type.Union([Type.Literal('metered'), Type.Literal('unmetered')]),
  /** The organization's balance in dollars; null when unmetered. */
  tokenBalanceUsd: Nullable(Num()),
  organization: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  /** The server clock, epoch ms (for checking the client's clock against the ±300 s window). */
  serverTime: Type.Integer(),
});
export type AuthTestResult = Static<typeof AuthTestResult>;

/** A page of `GET /sdk/v1/users`. */
export const UsersPage = Type.Object({
  items: Type.Array(UserSummary),
  total: Type.Integer(),
  page: Type.Integer(),
  perPage: Type.Integer(),
});
export type UsersPage = Static<typeof UsersPage>;
/** A page of `GET /sdk/v1/users/{ref}/measurements`, newest first. */
export const UserMeasurementsPage = Type.Object({
  items: Type.Array(Measurement),
  total: Type.Integer(),
  page: Type.Integer(),
  perPage: Type.Integer(),
});
export type UserMeasurementsPage = Static<typeof UserMeasurementsPage>;
/** A page of `GET /sdk/v1/logs`: oldest first; `nextCursor` continues after the last item (repeated on an empty page). */
export const LogsPage = Type.Object({
  items: Type.Array(UsageLogRow),
  nextCursor: Type.String(),
  serverTime: Type.Integer(),
});
export type LogsPage = Static<typeof LogsPage>;
