/**
 * `vitals-server webhooks create|rotate|list|delete|journal|redeliver|test` (CONTRACT.md): the
 * console's webhook screens as operator commands. Secrets are printed once, at create and rotate.
 */
import type { Config } from '../config.js';
import { createContext, closeContext } from '../deps.js';
import type { ExtraCommand } from './extra.js';
import { UsageError } from './args.js';
import { createEndpoint, deleteEndpoint, EndpointError, listEndpoints, rotateEndpoint } from '../webhooks/endpoints.js';
import { attemptsOf, getDelivery, listDeliveries, type DeliveryRow } from '../webhooks/journal.js';
import { deliverOne, journalTest, redeliver } from '../webhooks/dispatcher.js';
import { batchOf } from '../batch/batch-runtime.js';
import type { AppContext } from '../context.js';

const USAGE = `webhooks create --org ORG --url URL --json | rotate ID --json | list [--org ORG] | delete ID
           | journal [WHD_ID] [--org ORG] [--limit N] | redeliver WHD_ID | test ID`;

const journalRow = (d: DeliveryRow) => ({
  id: d.id,
  event: d.event,
  target: d.target,
  endpointId: d.endpoint_id,
  jobId: d.job_id,
  url: d.url,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code,
  lastError: d.last_error,
  lastResponseMs: d.last_response_ms,
  nextAttemptAt: d.next_attempt_at,
  redeliveryOf: d.redelivery_of,
  createdAt: d.created_at,
});

/** Attempts at once; if a running worker took the attempt first, waits (up to 15 s) for its outcome. */
async function sendNow(ctx: AppContext, id: string): Promise<object> {
  await deliverOne(ctx, batchOf(ctx), id);
  let d = await getDelivery(ctx.db.db, id);
  for (let i = 0; i < 150 && d && d.attempts === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    d = await getDelivery(ctx.db.db, id);
  }
  return d ? journalRow(d) : { id };
}

async function run(
  config: Config,
  sub: string | undefined,
  rest: string[],
  flags: Record<string, string | boolean | undefined>,
): Promise<object> {
  const ctx = await createContext(config, { batch: { embeddedWorker: false } });
  try {
    switch (sub) {
      case 'create':
        if (typeof flags.org !== 'string' || typeof flags.url !== 'string')
          throw new UsageError('webhooks create needs --org ORG --url URL');
        return await createEndpoint(ctx, flags.org, flags.url);
      case 'rotate':
        if (!rest[0]) throw new UsageError('webhooks rotate needs ID');
        return await rotateEndpoint(ctx, rest[0]);
      case 'delete':
        if (!rest[0]) throw new UsageError('webhooks delete needs ID');
        if (!(await deleteEndpoint(ctx, rest[0]))) throw new UsageError(`no webhook endpoint ${rest[0]}`);
        return { id: rest[0], status: 'deleted' };
      case 'list':
        return { endpoints: await listEndpoints(ctx, typeof flags.org === 'string' ? flags.org : undefined) };
      case 'journal': {
        if (rest[0]) {
          const d = await getDelivery(ctx.db.db, rest[0]);
          if (!d) throw new UsageError(`no delivery ${rest[0]}`);
          return { ...journalRow(d), attemptLog: await attemptsOf(ctx.db.db, d.id) };
        }
        const limit = typeof flags.limit === 'string' ? Number(flags.limit) : 50;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1-1000');
        const rows = await listDeliveries(ctx.db.db, {
          orgId: typeof flags.org === 'string' ? flags.org : undefined,
          limit,
        });
        return { deliveries: rows.map(journalRow) };
      }
      case 'redeliver': {
        if (!rest[0]) throw new UsageError('webhooks redeliver needs WHD_ID');
        const id = await redeliver(ctx, rest[0]);
        if (!id) throw new UsageError(`no delivery ${rest[0]}`);
        return await sendNow(ctx, id);
      }
      case 'test': {
        if (!rest[0]) throw new UsageError('webhooks test needs an endpoint ID');
        const id = await journalTest(ctx, rest[0]);
        if (!id) throw new UsageError(`no webhook endpoint ${rest[0]}`);
        return await sendNow(ctx, id);
      }
      default:
        throw new UsageError(`usage: ${USAGE}`);
    }
  } catch (err) {
    if (err instanceof EndpointError) throw new UsageError(err.message);
    throw err;
  } finally {
    await closeContext(ctx);
  }
}

export const webhooksCommand: ExtraCommand = {
  name: 'webhooks',
  usage: USAGE,
  async run(config, sub, rest, flags, out) {
    out(await run(config, sub, rest, flags));
    return 0;
  },
};
