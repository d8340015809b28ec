/** The live pulse waveform on a canvas: the last 5 s of the on-device display signal, drawn as it comes. */
import type { WavePoint } from './on-device.js';

const SPAN_MS = 5000;

export class WaveView {
  private readonly points: WavePoint[] = [];
  private frame = 0;

  constructor(private readonly canvas: HTMLCanvasElement) {}

  push(p: WavePoint): void {
    this.points.push(p);
    while (this.points.length && this.points[0].tMs < p.tMs - SPAN_MS) this.points.shift();
    this.frame ||= requestAnimationFrame(() => this.draw());
  }

  private draw(): void {
    this.frame = 0;
    const ctx = this.canvas.getContext('2d');
    if (!ctx || this.points.length < 2) return;
    const { width: w, height: h } = this.canvas;
    ctx.clearRect(0, 0, w, h);
    ctx.strokeStyle = '#ff6b81';
    ctx.lineWidth = 2;
    ctx.beginPath();
    const end = this.points[this.points.length - 1].tMs;
    this.points.forEach((p, i) => {
      const x = w - ((end - p.tMs) / SPAN_MS) * w;
      const y = h / 2 - p.v * (h / 2 - 4);
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }
}
