/** Styles of `<vitals-measure>` (shadow DOM; themable through the custom properties). */
export const ELEMENT_CSS = `
:host { display: block; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--vitals-fg, #1b1f24); --accent: var(--vitals-accent, #0b6bcb); max-width: 560px; }
.stage { position: relative; aspect-ratio: 4 / 3; background: #111; border-radius: 14px; overflow: hidden; }
video { width: 100%; height: 100%; object-fit: cover; transform: scaleX(-1); display: block; }
svg.guide { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
.guide ellipse { fill: none; stroke: rgba(255,255,255,.85); stroke-width: 3; stroke-dasharray: 10 8; }
.guide .ring-bg { fill: none; stroke: rgba(255,255,255,.25); stroke-width: 8; }
.guide .ring { fill: none; stroke: var(--accent); stroke-width: 8; stroke-linecap: round;
  transform: rotate(-90deg); transform-box: fill-box; transform-origin: center; transition: stroke-dashoffset .25s linear; }
:host([data-face="ok"]) .guide ellipse { stroke: #37c871; stroke-dasharray: none; }
.hud { position: absolute; left: 12px; right: 12px; bottom: 12px; display: flex; gap: 10px; align-items: flex-end;
  justify-content: space-between; }
.hr { background: rgba(0,0,0,.6); color: #fff; border-radius: 10px; padding: 6px 12px; font-size: 28px;
  font-weight: 650; min-width: 5ch; font-variant-numeric: tabular-nums; }
.hr small { font-size: 14px; font-weight: 500; opacity: .85; margin-left: 4px; }
canvas.wave { background: rgba(0,0,0,.6); border-radius: 10px; width: 45%; height: 56px; }
.hint { position: absolute; left: 12px; right: 84px; top: 12px; background: rgba(255,244,200,.95); color: #3d2e00;
  border-radius: 10px; padding: 8px 12px; font-weight: 550; }
.hint:empty { display: none; }
.bar { height: 8px; background: #e3e7ec; border-radius: 4px; margin: 12px 0 4px; overflow: hidden; }
.bar > div { height: 100%; width: 0; background: var(--accent); transition: width .25s linear; }
.status { color: #4a535e; min-height: 1.45em; }
.controls { display: flex; gap: 10px; margin-top: 10px; }
button { font: inherit; padding: 10px 18px; border-radius: 10px; border: 1px solid #b8c2cc; background: #fff; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; font-weight: 600; }
button:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
button[hidden] { display: none; }
.error { border: 2px solid #c62828; background: #fdecea; color: #7a1111; border-radius: 10px; padding: 10px 12px; margin-top: 10px; }
.error:empty { display: none; }
.result { margin-top: 14px; border: 1px solid #d7dde3; border-radius: 12px; padding: 4px 16px 10px; }
.result:empty { display: none; }
.result dl { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 8px 0; }
.result dt { color: #4a535e; } .result dd { margin: 0; font-weight: 600; } .result dd.absent { font-weight: 400; color: #4a535e; }
.quality-good { color: #1b6e3a; } .quality-fair { color: #8a5a00; } .quality-poor { color: #a11d1d; }
.meta { color: #66707a; font-size: 13px; } .disclaimer { font-size: 13px; color: #4a535e; border-top: 1px solid #e3e7ec; padding-top: 8px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (prefers-reduced-motion: reduce) { .ring, .bar > div { transition: none; } }
`;
