// Small line charts as inline SVG: one series, its latest value written beside it.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 56;

function svg(tag, attributes = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/**
 * A figure with a title, the latest value and a line over `values` (oldest first). `format` turns a
 * number into the text shown; the scale starts at 0 and ends at the largest value (at least `minMax`).
 */
export function lineChart({ title, values, format, minMax = 1, metric, method }) {
  const last = values.length > 0 ? values[values.length - 1] : 0;
  const max = Math.max(minMax, ...values);
  const figure = document.createElement('figure');
  figure.className = 'chart';
  figure.dataset.metric = metric;
  figure.dataset.method = method;
  figure.dataset.last = String(last);
  figure.dataset.points = String(values.length);
  const caption = document.createElement('figcaption');
  const name = document.createElement('span');
  name.textContent = title;
  const value = document.createElement('strong');
  value.className = 'chart-value';
  value.textContent = format(last);
  caption.append(name, value);
  const drawing = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': `${title} of ${method}: ${format(last)} now, at most ${format(max)} over the last ${values.length} s`,
  });
  drawing.append(svg('line', { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: 'axis' }));
  if (values.length > 1) {
    const step = WIDTH / (values.length - 1);
    const points = values.map(
      (v, i) => `${(i * step).toFixed(1)},${(HEIGHT - 2 - (v / max) * (HEIGHT - 6)).toFixed(1)}`,
    );
    drawing.append(svg('polyline', { points: points.join(' '), class: 'line' }));
  }
  const scale = document.createElement('span');
  scale.className = 'chart-scale';
  scale.textContent = `max ${format(max)}`;
  figure.append(caption, drawing, scale);
  return figure;
}
