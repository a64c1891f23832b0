/** Plain text tables for terminal output: left-aligned columns, two spaces apart. */

/** Visible width of `text` (ANSI colour codes do not count). */
function width(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI escapes
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

/** Lines of a table; `header` cells are written as given (style them before). */
export function formatTable(header: string[], rows: string[][], indent = ''): string[] {
  const widths = header.map((cell, i) => Math.max(width(cell), ...rows.map((row) => width(row[i] ?? ''))));
  const format = (cells: string[]) =>
    indent +
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i]! - width(cell))))
      .join('  ')
      .trimEnd();
  return [format(header), ...rows.map(format)];
}
