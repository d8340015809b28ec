/** Streaming events (spec: Events, "Streaming events") plus the session's own local events. */
import type { CloudJob, Measurement } from '../types.js';

export interface ReadyEvent {
  t: 'ready';
  sessionId: string;
  acceptedFeatures: string[];
}
export interface HrEvent {
  t: 'hr';
  hr: number;
  sqi: number;
  tMs: number;
}
export interface HrvEvent {
  t: 'hrv';
  rmssdMs: number;
  sdnnMs: number;
  meanRrMs: number;
}
export interface BpEvent {
  t: 'bp';
  systolicMmHg: number;
  diastolicMmHg: number;
  confidence: number;
}
export interface Spo2Event {
  t: 'spo2';
  value: number;
  confidence: number;
}
export interface EmotionEvent {
  t: 'emotion';
  /** Anger, Contempt, Disgust, Fear, Happiness, Neutral, Sadness, Surprise. */
  probs: number[];
  tMs: number;
}
export interface GazeEvent {
  t: 'gaze';
  yaw: number;
  pitch: number;
  tMs: number;
}
export interface StatsEvent {
  t: 'stats';
  received: number;
  dropped: number;
  backlogMs: number;
}
export interface ErrorEvent {
  t: 'error';
  code: string;
  message: string;
  fatal: boolean;
}
export interface FinalEvent {
  t: 'final';
  measurementId: string;
  measurement: Measurement;
  /** How the result arrived: over the socket, or through the batch fallback job. */
  via: 'stream' | 'batch';
  /** The batch job, when `via` is `batch`. */
  job?: CloudJob;
}
export interface PongEvent {
  t: 'pong';
}
/** Local: the session switched to the batch fallback (auto mode). */
export interface FallbackEvent {
  t: 'fallback';
  reason: string;
}
/** Local: the socket closed. */
export interface CloseEvent {
  t: 'close';
  code: number;
  reason: string;
}

export interface StreamEventMap {
  ready: ReadyEvent;
  hr: HrEvent;
  hrv: HrvEvent;
  bp: BpEvent;
  spo2: Spo2Event;
  emotion: EmotionEvent;
  gaze: GazeEvent;
  stats: StatsEvent;
  error: ErrorEvent;
  final: FinalEvent;
  pong: PongEvent;
  fallback: FallbackEvent;
  close: CloseEvent;
}
export type StreamEvent = StreamEventMap[keyof StreamEventMap];

export const SERVER_EVENT_TYPES = new Set([
  'ready',
  'hr',
  'hrv',
  'bp',
  'spo2',
  'emotion',
  'gaze',
  'stats',
  'error',
  'final',
  'pong',
]);

type Listener<E> = (event: E) => void;

/** A small typed emitter with an async-iterator view; isomorphic (no Node `events`). */
export class EventHub {
  private readonly listeners = new Map<string, Set<Listener<any>>>();
  private readonly queues = new Set<{ push(e: StreamEvent | null): void }>();
  private ended = false;

  on<K extends keyof StreamEventMap>(type: K, fn: Listener<StreamEventMap[K]>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => this.off(type, fn);
  }

  once<K extends keyof StreamEventMap>(type: K, fn: Listener<StreamEventMap[K]>): () => void {
    const off = this.on(type, (e) => {
      off();
      fn(e);
    });
    return off;
  }

  off<K extends keyof StreamEventMap>(type: K, fn: Listener<StreamEventMap[K]>): void {
    this.listeners.get(type)?.delete(fn);
  }

  emit(event: StreamEvent): void {
    for (const fn of [...(this.listeners.get(event.t) ?? [])]) {
      try {
        fn(event);
      } catch {
        // A listener's bug must not break the session.
      }
    }
    for (const q of this.queues) q.push(event);
  }

  /** Ends every iterator (after `final`, `abort` or a failure). */
  end(): void {
    this.ended = true;
    for (const q of this.queues) q.push(null);
  }

  /** Every event from now on, until the session ends. */
  iterate(): AsyncIterableIterator<StreamEvent> {
    const buffer: (StreamEvent | null)[] = this.ended ? [null] : [];
    let wake: (() => void) | undefined;
    const queue = {
      push: (e: StreamEvent | null) => {
        buffer.push(e);
        wake?.();
      },
    };
    this.queues.add(queue);
    const close = (): void => {
      this.queues.delete(queue);
    };
    const it: AsyncIterableIterator<StreamEvent> = {
      next: async () => {
        while (buffer.length === 0) await new Promise<void>((r) => (wake = r));
        wake = undefined;
        const e = buffer.shift()!;
        if (e === null) {
          close();
          buffer.unshift(null);
          return { done: true, value: undefined };
        }
        return { done: false, value: e };
      },
      return: async () => {
        close();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }
}
