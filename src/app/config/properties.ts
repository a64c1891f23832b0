/**
 * A `.properties` reader (Java style): `key=value` or `key: value` lines, `#` and `!` comments, blank
 * lines, backslash line continuations, and `\t \n \\ \uXXXX` escapes.
 */
export function parseProperties(text: string): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (endsWithContinuation(line) && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i]!.replace(/^\s+/, '');
    }
    const match = /^((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (match) entries.push([unescapeProperty(match[1]!), unescapeProperty(match[2]!)]);
    else entries.push([unescapeProperty(line), '']);
  }
  return entries;
}

function endsWithContinuation(line: string): boolean {
  let slashes = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === '\\'; i--) slashes++;
  return slashes % 2 === 1;
}

function unescapeProperty(value: string): string {
  return value.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, escaped: string) => {
    if (escaped.startsWith('u') && escaped.length === 5)
      return String.fromCharCode(Number.parseInt(escaped.slice(1), 16));
    return { t: '\t', n: '\n', r: '\r', f: '\f' }[escaped] ?? escaped;
  });
}
