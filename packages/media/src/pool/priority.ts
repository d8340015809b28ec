/**
 * Lowers the calling thread's scheduling priority (Linux: `nice` is per thread, and the processes
 * the thread starts, such as a video's ffmpeg, inherit it). A worker that analyses videos then
 * yields the cores to the main thread, which answers the API and runs live sessions: on a machine
 * whose cores are all busy with videos, requests still get the CPU first (docs/media.md, "Worker
 * threads"). Elsewhere, or without the permission, it does nothing.
 */
import { readlinkSync } from 'node:fs';
import os from 'node:os';

export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux' || !(nice > 0)) return false;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>": the thread's own id for setpriority.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid)) return false;
    os.setPriority(tid, Math.min(19, Math.max(os.getPriority(tid), Math.round(nice))));
    return true;
  } catch {
    return false;
  }
}
