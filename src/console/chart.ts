/** A bar chart in SVG, drawn element by element (no markup parsed, nothing inline for the CSP to refuse). */
const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** One bar per point, labelled below every `labelEvery`; the tallest bar's value written at the top left. */
export function barChart(points: readonly { label: string; value: number }[], opts: { title: string; testid?: string; width?: number }): SVGSVGElement {
  // The drawing's width in its own units: about the pixels it gets, so its text stays readable.
  const width = opts.width ?? 900;
  const height = 180;
  const bottom = 20;
  const top = 16;
  const max = Math.max(1, ...points.map((p) => p.value));
  // A few bars do not stretch across the whole width.
  const step = Math.min(width / Math.max(1, points.length), 90);
  const labelEvery = Math.max(1, Math.ceil(points.length / 10));
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    preserveAspectRatio: 'xMinYMid meet',
    class: 'chart',
    role: 'img',
    'aria-label': opts.title,
    ...(opts.testid ? { 'data-testid': opts.testid } : {}),
  });
  chart.append(svg('title', {}, opts.title), svg('text', { x: 0, y: 10 }, `max ${max}`));
  points.forEach((p, i) => {
    const h = Math.max(0, p.value) * ((height - bottom - top) / max);
    const bar = svg('rect', { x: i * step + 1, y: height - bottom - h, width: Math.max(1, step - 2), height: h });
    bar.append(svg('title', {}, `${p.label}: ${p.value}`));
    chart.append(bar);
    // Cut to the room a label has (about 6 units a character); the bar's own title keeps it whole.
    const room = Math.max(3, Math.floor((step * labelEvery) / 6) - 1);
    if (i % labelEvery === 0) chart.append(svg('text', { x: i * step + 1, y: height - 6 }, p.label.length > room ? `${p.label.slice(0, room - 1)}…` : p.label));
  });
  return chart;
}
