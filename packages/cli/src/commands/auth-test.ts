/** `vitals auth test`: verify the credentials and print the key's facts. */
import { loadConfig } from '../config.js';
import { makeClient } from '../client.js';
import type { CliIo } from '../io.js';
import { formatFacts } from '../ui/format.js';

export async function authTest(opts: { json?: boolean }, io: CliIo): Promise<number> {
  const client = makeClient(loadConfig(io.env), io);
  const facts = await client.auth.test({ signal: io.signal });
  const driftMs = facts.clockDrift?.driftMs;
  if (opts.json) io.stdout.write(JSON.stringify({ ...facts, clockDriftMs: driftMs }) + '\n');
  else io.stdout.write(formatFacts(facts, driftMs));
  return 0;
}
