/**
 * The video workers' packet consumer (`@vitals/media/threads` `createVideoPool({ consumer })`):
 * a video job's packets go into the engine's trace as its face is followed, and the trace is
 * estimated in the same worker once the video ends. `estimateOffline(packets)` is
 * `analyzeTrace(buildRgbTrace(packets))`, and this appends the same packets in the same order, so
 * the measurement is the same; but the crops (3.9 KB a frame, ~400 MB for an hour) are never
 * kept, nor copied to the main thread and on to an estimator thread (docs/decisions.md, "Heavy
 * work off the main thread" and "Videos last one hour at most").
 */
import { analyzeTrace, appendPacket, createRgbTrace, type EngineMeasurement } from '@vitals/engine';
import type { PacketConsumer } from '@vitals/media/threads';
import type { Packet } from '@vitals/protocol';
import { videoCaptureSource } from '../domain/measurement-fields.js';

export interface VideoPacketConsumer extends PacketConsumer {
  finish(stats: Parameters<typeof videoCaptureSource>[0]): EngineMeasurement;
}

export function createPacketConsumer(): VideoPacketConsumer {
  const trace = createRgbTrace();
  return {
    push: (p: Packet) => void appendPacket(trace, p),
    finish: (stats) => analyzeTrace(trace, { source: videoCaptureSource(stats) }),
  };
}
