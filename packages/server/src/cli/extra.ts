/**
 * Commands contributed by the tiers (worker, webhooks ...). Each names itself, its usage line,
 * and runs with the resolved config.
 */
import type { Config } from '../config.js';

export interface ExtraCommand {
  name: string;
  usage: string;
  run(
    config: Config,
    sub: string | undefined,
    rest: string[],
    flags: Record<string, string | boolean | undefined>,
    out: (o: object) => void,
  ): Promise<number>;
}

export const extraCommands: ExtraCommand[] = [];
