/**
 * The `hello` handshake (spec: Streaming protocol; CLARIFICATIONS 26, 27): the protocol version
 * and the session token first, then the key that minted the token, the features this node can
 * serve, and the pending→running compare-and-set that makes a token good for one connection.
 */
import { PROTOCOL_VERSION, type StreamErrorCode } from '@vitals/protocol';
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import { verifySessionToken, type SessionClaims } from '../domain/session-token.js';
import { transitionJob } from '../store/jobs.js';
import { auxAnalyzer } from './aux-models.js';
import { CLOSE } from './limits.js';

/** A `hello` that is answered with a fatal error and this close code. */
export interface Refusal {
  code: StreamErrorCode;
  message: string;
  closeCode: number;
}

/** The session now runs on this connection (its job moved pending→running at `startedAt`). */
export interface Grant {
  claims: SessionClaims;
  accepted: string[];
  /** Set when emotion or gaze was accepted. */
  analyzer?: AuxAnalyzer;
  startedAt: number;
}

export function isRefusal(r: object): r is Refusal {
  return 'closeCode' in r;
}

/** The checks that need no I/O: a refusal here is sent in the same turn as the `hello`. */
export function checkHello(ctx: AppContext, msg: any): SessionClaims | Refusal {
  if (msg.protocol !== PROTOCOL_VERSION) {
    return { code: 'protocol_error', message: `hello.protocol must be ${PROTOCOL_VERSION}`, closeCode: CLOSE.protocol };
  }
  const check = verifySessionToken(ctx.serverSecret, msg.token, ctx.clock.now());
  if (!check.ok) {
    const message =
      check.code === 'token_expired' ? 'session token expired; mint a new session' : 'session token did not verify';
    return { code: check.code, message, closeCode: CLOSE.policy };
  }
  return check.claims;
}

/**
 * The key, the features, then the compare-and-set. `undefined` when `stillWaiting()` turned false
 * while the models loaded (the socket failed or closed): nothing was claimed.
 */
export async function authorize(
  ctx: AppContext,
  claims: SessionClaims,
  requested: unknown,
  stillWaiting: () => boolean,
): Promise<Grant | Refusal | undefined> {
  const key = await ctx.keys.get(claims.kid);
  if (!key || key.status !== 'active' || (key.expiresAt !== null && key.expiresAt <= ctx.clock.now())) {
    return {
      code: 'token_invalid',
      message: 'the key that minted this session is not active',
      closeCode: CLOSE.policy,
    };
  }
  let accepted = claims.feat.slice();
  if (Array.isArray(requested)) accepted = accepted.filter((f) => requested.includes(f));
  let analyzer: AuxAnalyzer | undefined;
  if (wantsAux(accepted)) {
    const a = await auxAnalyzer(ctx);
    accepted = accepted.filter((f) => (f === 'emotion' ? a.emotionAvailable : f === 'gaze' ? a.gazeAvailable : true));
    if (wantsAux(accepted)) analyzer = a;
  }
  if (!stillWaiting()) return undefined;
  const now = ctx.clock.now();
  // One connection per token, across processes: only the call that moves pending→running wins.
  const moved = await transitionJob(ctx.db.db, claims.sid, ['pending'], {
    status: 'running',
    started_at: now,
    updated_at: now,
    accepted_features: JSON.stringify(accepted),
  });
  if (!moved) {
    return {
      code: 'session_already_used',
      message: 'this session was already connected (one connection per token)',
      closeCode: CLOSE.policy,
    };
  }
  return { claims, accepted, analyzer, startedAt: now };
}

const wantsAux = (features: string[]): boolean => features.includes('emotion') || features.includes('gaze');
