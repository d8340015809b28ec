/**
 * Keeps a process tree at a raised scheduling priority, for the camera test on a shared machine
 * (docs/capture.md "An overloaded run"): Chromium's fake camera plays its file on the CPU and never
 * catches up once starved, so the browser and the service it talks to must not wait behind other
 * jobs. Linux only (/proc); where raising priority is not allowed it does nothing.
 *
 * Every thread is reniced, every second: Chromium forks its renderers and utilities from a zygote at
 * the default priority and sets its threads' priorities itself, and a niceness is per thread on Linux.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

function parentOf(pid: number): number {
  // `pid (comm) state ppid …`: comm may hold spaces or parentheses, so read after the last ')'.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** `root`'s descendants (and `root` itself with `includeRoot`) whose executable matches `exe`. */
function tree(root: number, includeRoot: boolean, exe?: RegExp): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      parents.set(pid, parentOf(pid));
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  for (const pid of parents.keys()) {
    let p: number | undefined = includeRoot ? pid : parents.get(pid);
    while (p !== undefined && p > 1 && p !== root) p = parents.get(p);
    if (p !== root) continue;
    try {
      if (!exe || exe.test(readlinkSync(`/proc/${pid}/exe`))) out.push(pid);
    } catch {
      // exited, or not ours to read
    }
  }
  return out;
}

function renice(pid: number, niceness: number): void {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of tids) {
    try {
      if (getPriority(Number(tid)) > niceness) setPriority(Number(tid), niceness);
    } catch {
      // not allowed, or the thread ended
    }
  }
}

/** Renices the tree now and every second until the returned function is called. */
export function holdPriority(opts: { root: number; includeRoot: boolean; exe?: RegExp; niceness: number }): () => void {
  if (process.platform !== 'linux') return () => undefined;
  const tick = (): void => {
    try {
      for (const pid of tree(opts.root, opts.includeRoot, opts.exe)) renice(pid, opts.niceness);
    } catch {
      // /proc unreadable: nothing to do
    }
  };
  tick();
  const timer = setInterval(tick, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
