/**
 * The console API (`/api/v1`, issue 16; docs/console.md, "API"): bodies and answers of the routes
 * the console's pages call. Authenticated by the console session cookie, never by an API key.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FEATURES, KEY_RATE_LIMIT_PER_MIN_MAX, USER_REF_PATTERN } from '../limits.js';
import { Measurement } from './measurement.js';
import { UsageLogRow } from './account.js';
import { Nullable, Num, Opt, StringEnum } from './shared.js';

const Id = (prefix: string) => Type.String({ pattern: `^${prefix}_[A-Za-z0-9]{1,64}$`, maxLength: 80 });
const EpochMs = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 });
const Usd = Num({ minimum: 0, maximum: 1_000_000_000 });

export const ConsoleLogin = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type ConsoleLogin = Static<typeof ConsoleLogin>;

export const ConsoleMe = Type.Object({
  accountId: Type.String(),
  email: Type.String(),
  orgId: Type.String(),
  orgName: Type.String(),
  /** US dollars; null: the organization is unmetered. */
  balanceUsd: Nullable(Num()),
  /** Epoch ms: when the session ends unless used again (idle) or at the latest (absolute). */
  sessionExpiresAt: Type.Integer(),
});
export type ConsoleMe = Static<typeof ConsoleMe>;

export const ConsoleMonthQuery = Type.Object({
  month: Opt(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$' })),
});

const KeyStatus = StringEnum(['active', 'disabled'] as const);
const Features = Type.Array(StringEnum(FEATURES), { maxItems: 16 });
const RateLimit = Type.Integer({ minimum: 0, maximum: KEY_RATE_LIMIT_PER_MIN_MAX });
const QuotaSeconds = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });
const KeyName = Type.String({ minLength: 1, maxLength: 64 });

export const ConsoleKey = Type.Object({
  keyId: Type.String(),
  name: Nullable(Type.String()),
  mode: StringEnum(['live', 'test'] as const),
  status: KeyStatus,
  createdAt: Type.Integer(),
  expiresAt: Nullable(Type.Integer()),
  /** 0: the server's maximum. */
  rateLimitPerMin: Type.Integer(),
  quotaSecondsMonth: Nullable(Type.Integer()),
  tokenQuotaMonthUsd: Nullable(Num()),
  features: Type.Array(Type.String()),
  lastUsedAt: Nullable(Type.Integer()),
});
export type ConsoleKey = Static<typeof ConsoleKey>;

export const ConsoleKeyCreate = Type.Object(
  {
    name: Opt(KeyName),
    mode: Opt(StringEnum(['live', 'test'] as const)),
    expiresAt: Opt(Nullable(EpochMs)),
    rateLimitPerMin: Opt(RateLimit),
    quotaSecondsMonth: Opt(Nullable(QuotaSeconds)),
    tokenQuotaMonthUsd: Opt(Nullable(Usd)),
    features: Opt(Features),
  },
  { additionalProperties: false },
);
export type ConsoleKeyCreate = Static<typeof ConsoleKeyCreate>;

export const ConsoleKeyPatch = Type.Object(
  {
    name: Opt(Nullable(KeyName)),
    status: Opt(KeyStatus),
    expiresAt: Opt(Nullable(EpochMs)),
    rateLimitPerMin: Opt(RateLimit),
    quotaSecondsMonth: Opt(Nullable(QuotaSeconds)),
    tokenQuotaMonthUsd: Opt(Nullable(Usd)),
    features: Opt(Features),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ConsoleKeyPatch = Static<typeof ConsoleKeyPatch>;

export const ConsoleKeyList = Type.Object({ items: Type.Array(ConsoleKey) });
export const ConsoleKeyCreated = Type.Object({ key: ConsoleKey, secret: Type.String() });
export const ConsoleKeyOne = Type.Object({ key: ConsoleKey });

export const ConsoleEndpoint = Type.Object({
  id: Type.String(),
  url: Type.String(),
  status: Type.String(),
  createdAt: Type.Integer(),
  rotatedAt: Nullable(Type.Integer()),
});
export type ConsoleEndpoint = Static<typeof ConsoleEndpoint>;
export const ConsoleEndpointList = Type.Object({ items: Type.Array(ConsoleEndpoint), limit: Type.Integer() });
export const ConsoleEndpointCreate = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: 2048 }) },
  { additionalProperties: false },
);
export const ConsoleEndpointSecret = Type.Object({ endpoint: ConsoleEndpoint, secret: Type.String() });
export const ConsoleDeliveryQueued = Type.Object({ deliveryId: Type.String() });

export const DeliveryOutcome = StringEnum(['pending', 'succeeded', 'failed'] as const);
export const ConsoleDelivery = Type.Object({
  id: Type.String(),
  target: StringEnum(['endpoint', 'job'] as const),
  endpointId: Nullable(Type.String()),
  event: Type.String(),
  jobId: Nullable(Type.String()),
  url: Type.String(),
  status: DeliveryOutcome,
  httpStatus: Nullable(Type.Integer()),
  attempts: Type.Integer(),
  maxAttempts: Type.Integer(),
  lastError: Nullable(Type.String()),
  responseTimeMs: Nullable(Type.Integer()),
  nextAttemptAt: Nullable(Type.Integer()),
  redeliveryOf: Nullable(Type.String()),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});
export type ConsoleDelivery = Static<typeof ConsoleDelivery>;
export const ConsoleDeliveriesQuery = Type.Object({
  endpointId: Opt(Id('whe')),
  event: Opt(Type.String({ maxLength: 64 })),
  outcome: Opt(DeliveryOutcome),
  cursor: Opt(Type.String({ maxLength: 80 })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});
export const ConsoleDeliveriesPage = Type.Object({
  items: Type.Array(ConsoleDelivery),
  nextCursor: Nullable(Type.String()),
});
export const ConsoleDeliveryDetail = Type.Object({
  delivery: ConsoleDelivery,
  attemptLog: Type.Array(
    Type.Object({
      attempt: Type.Integer(),
      at: Type.Integer(),
      ok: Type.Boolean(),
      httpStatus: Nullable(Type.Integer()),
      error: Nullable(Type.String()),
      responseTimeMs: Nullable(Type.Integer()),
    }),
  ),
});

export const ConsoleUsageQuery = Type.Object({
  keyId: Opt(Id('key')),
  status: Opt(StringEnum(['success', 'unauthorized', 'rate_limited'] as const)),
  errorCode: Opt(Type.String({ pattern: '^[a-z_]{1,40}$' })),
  from: Opt(EpochMs),
  to: Opt(EpochMs),
  before: Opt(Type.String({ maxLength: 64 })),
  after: Opt(Type.String({ maxLength: 64 })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
});
export const ConsoleUsageRow = Type.Composite([UsageLogRow, Type.Object({ keyId: Type.String() })]);
export const ConsoleUsagePage = Type.Object({
  items: Type.Array(ConsoleUsageRow),
  nextCursor: Nullable(Type.String()),
  tailCursor: Type.String(),
});

const Page = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 });
const PerPage = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
export const ConsoleUsersQuery = Type.Object({ keyId: Opt(Id('key')), page: Page, perPage: PerPage });
export const ConsoleUsersPage = Type.Object({
  items: Type.Array(
    Type.Object({
      keyId: Type.String(),
      userRef: Type.String(),
      measurements: Type.Integer(),
      firstSeenAt: Type.Integer(),
      lastSeenAt: Type.Integer(),
      avgQuality: Nullable(Num()),
    }),
  ),
  total: Type.Integer(),
  page: Type.Integer(),
  perPage: Type.Integer(),
});
export const ConsoleUserParams = Type.Object({
  keyId: Id('key'),
  userRef: Type.String({ pattern: USER_REF_PATTERN }),
});
export const ConsoleUserMeasurementsQuery = Type.Object({
  page: Page,
  perPage: PerPage,
  from: Opt(EpochMs),
  to: Opt(EpochMs),
});
export const ConsoleUserMeasurementsPage = Type.Object({
  items: Type.Array(Measurement),
  total: Type.Integer(),
  page: Type.Integer(),
  perPage: Type.Integer(),
});

export const ConsoleOverview = Type.Object({
  month: Type.String(),
  cloudSeconds: Type.Object({ used: Num(), quota: Nullable(Num()) }),
  tokenSpendUsd: Type.Object({ used: Num(), cap: Nullable(Num()) }),
  balanceUsd: Nullable(Num()),
  measurementsPerDay: Type.Array(Type.Object({ day: Type.String(), count: Type.Integer() })),
  qualityMix: Type.Object({
    good: Type.Integer(),
    fair: Type.Integer(),
    poor: Type.Integer(),
    unknown: Type.Integer(),
  }),
  refusalsByCode: Type.Array(Type.Object({ errorCode: Type.String(), count: Type.Integer() })),
  keys: Type.Array(
    Type.Object({
      keyId: Type.String(),
      name: Nullable(Type.String()),
      status: Type.String(),
      cloudSeconds: Num(),
      quotaSecondsMonth: Nullable(Type.Integer()),
      tokensUsd: Num(),
      tokenQuotaMonthUsd: Nullable(Num()),
    }),
  ),
});
export type ConsoleOverview = Static<typeof ConsoleOverview>;

export const ConsolePurchase = Type.Object({
  id: Type.String(),
  packId: Type.String(),
  priceUsd: Num(),
  tokensUsd: Num(),
  provider: Type.String(),
  status: StringEnum(['pending', 'completed', 'failed'] as const),
  createdAt: Type.Integer(),
});
export type ConsolePurchase = Static<typeof ConsolePurchase>;
export const ConsoleBilling = Type.Object({
  balanceUsd: Nullable(Num()),
  pricing: Type.Unknown(),
  spendByMonth: Type.Array(Type.Object({ month: Type.String(), tokensUsd: Num(), cloudSeconds: Num() })),
  purchase: Type.Object({ provider: Type.String(), enabled: Type.Boolean() }),
  purchases: Type.Array(ConsolePurchase),
});
export const ConsolePurchaseCreate = Type.Object(
  { packId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const ConsolePurchaseDone = Type.Object({ purchase: ConsolePurchase, balanceUsd: Nullable(Num()) });
