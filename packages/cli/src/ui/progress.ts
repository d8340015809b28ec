/**
 * Progress bar and spinner on stderr, only when stderr is a terminal (pipes and CI get plain
 * status lines, and nothing that would corrupt a `--json` stdout).
 */
import type { CliIo } from '../io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

function mib(n: number): string {
  return (n / 1048576).toFixed(1);
}

export class ProgressBar {
  private lastDraw = 0;
  constructor(
    private readonly io: CliIo,
    private readonly label: string,
  ) {}

  update(loaded: number, total: number): void {
    if (!this.io.stderr.isTTY) return;
    const now = Date.now();
    if (loaded < total && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const width = 30;
    const frac = total > 0 ? Math.min(1, loaded / total) : 1;
    const filled = Math.round(frac * width);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    this.io.stderr.write(`\r${this.label} ${bar} ${Math.round(frac * 100)}% (${mib(loaded)}/${mib(total)} MiB)`);
  }

  done(): void {
    if (this.io.stderr.isTTY) this.io.stderr.write('\n');
  }
}

export class Spinner {
  private i = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private text = '';
  private lastPlain = '';

  constructor(private readonly io: CliIo) {}

  start(text: string): void {
    this.set(text);
    if (!this.io.stderr.isTTY) return;
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref?.();
  }

  set(text: string): void {
    this.text = text;
    if (this.io.stderr.isTTY) this.draw();
    else if (text !== this.lastPlain) {
      this.lastPlain = text;
      this.io.stderr.write(`${text}\n`);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.io.stderr.isTTY) this.io.stderr.write('\r\x1b[2K');
  }

  private draw(): void {
    this.io.stderr.write(`\r\x1b[2K${FRAMES[this.i++ % FRAMES.length]} ${this.text}`);
  }
}
