/**
 * A connection's timers, driven by the hub's ticker (spec: Limits): no `hello` or no packets for
 * the idle timeout, the token's duration on the wall clock, incomplete aux sets, periodic `stats`.
 */
import type { StreamConnection } from './connection.js';
import { CLOSE, STATS_INTERVAL_MS, WALL_GRACE_MS } from './limits.js';
import { fatal } from './endings.js';
import { finish } from './finish.js';
import { sendStats } from './outbound.js';

export function tick(c: StreamConnection, now: number): void {
  const idleSec = c.deps.ctx.config.idleTimeoutSec;
  const idleMs = idleSec * 1000;
  if (c.phase === 'hello' && now - c.openedAt > idleMs) {
    fatal(c, 'idle_timeout', `no hello within ${idleSec} s`, CLOSE.policy);
    return;
  }
  if (c.phase !== 'running') return;
  if (now - c.lastPacketAt > idleMs) {
    fatal(c, 'idle_timeout', `no packets for ${idleSec} s`, CLOSE.policy);
    return;
  }
  if (now - c.startedAt > c.claims!.dur * 1000 + WALL_GRACE_MS) {
    void finish(c, 'duration');
    return;
  }
  c.aux?.sweep(now);
  if (now - c.lastStatsAt >= STATS_INTERVAL_MS) sendStats(c, now);
}
