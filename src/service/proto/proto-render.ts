/**
 * Writes a ProtoFile (proto-model.ts) as `.proto` text (proto3), two spaces per level. A field with
 * explicit presence (proto3 `optional`) is written as a oneof of that one field, `oneof _note { string
 * note = 3; }`: the same descriptor and wire format, and every protoc since 3.0 compiles it.
 */
import type { ProtoEnum, ProtoField, ProtoFile, ProtoMessage } from './proto-model.js';

export function renderProto(file: ProtoFile): string {
  const lines: string[] = [...file.header.map((line) => `// ${line}`.trimEnd()), 'syntax = "proto3";', ''];
  if (file.package !== '') lines.push(`package ${file.package};`, '');
  if (file.imports.length > 0) {
    for (const imported of file.imports) lines.push(`import "${imported}";`);
    lines.push('');
  }
  lines.push(`service ${file.service.name} {`);
  for (const rpc of file.service.rpcs) {
    const request = `${rpc.requestStream ? 'stream ' : ''}${rpc.request}`;
    const response = `${rpc.responseStream ? 'stream ' : ''}${rpc.response}`;
    lines.push(`  rpc ${rpc.name} (${request}) returns (${response});`);
  }
  lines.push('}');
  for (const type of file.types) {
    lines.push('');
    renderType(type, '', lines);
  }
  return `${lines.join('\n')}\n`;
}

function renderType(type: ProtoMessage | ProtoEnum, indent: string, lines: string[]): void {
  if (type.kind === 'enum') renderEnum(type, indent, lines);
  else renderMessage(type, indent, lines);
}

function renderEnum(type: ProtoEnum, indent: string, lines: string[]): void {
  lines.push(`${indent}enum ${type.name} {`);
  if (type.allowAlias === true) lines.push(`${indent}  option allow_alias = true;`);
  for (const value of type.values) lines.push(`${indent}  ${value.name} = ${value.number};`);
  lines.push(`${indent}}`);
}

function renderMessage(type: ProtoMessage, indent: string, lines: string[]): void {
  const inner = `${indent}  `;
  lines.push(`${indent}message ${type.name} {`);
  for (const nested of type.nested) renderType(nested, inner, lines);
  const written = new Set<string>();
  for (const field of type.fields) {
    if (field.label === 'optional') {
      // proto3 `optional` as what it means on the wire, a oneof of one field: protoc before 3.15 (the
      // one in grpc_tools 1.51, 3.5) refuses the keyword
      lines.push(`${inner}oneof _${field.name} { ${fieldLine({ ...field, label: undefined })} }`);
      continue;
    }
    if (field.oneof === undefined) {
      lines.push(`${inner}${fieldLine(field)}`);
      continue;
    }
    // a oneof is written, with all its fields, where its first field is
    if (written.has(field.oneof)) continue;
    written.add(field.oneof);
    lines.push(`${inner}oneof ${field.oneof} {`);
    for (const member of type.fields.filter((each) => each.oneof === field.oneof)) {
      lines.push(`${inner}  ${fieldLine(member)}`);
    }
    lines.push(`${inner}}`);
  }
  const reserved = type.reserved ?? [];
  const numbers = reserved.filter((entry) => typeof entry !== 'string');
  const names = reserved.filter((entry) => typeof entry === 'string');
  if (numbers.length > 0) {
    const ranges = numbers.map(([from, to]) =>
      from === to ? `${from}` : `${from} to ${to >= MAX_FIELD_NUMBER ? 'max' : to}`,
    );
    lines.push(`${inner}reserved ${ranges.join(', ')};`);
  }
  if (names.length > 0) lines.push(`${inner}reserved ${names.map((name) => `"${name}"`).join(', ')};`);
  lines.push(`${indent}}`);
}

/** The largest field number protobuf allows. */
const MAX_FIELD_NUMBER = 536_870_911;

function fieldLine(field: ProtoField): string {
  const type = field.keyType === undefined ? field.type : `map<${field.keyType}, ${field.type}>`;
  const label = field.label === undefined ? '' : `${field.label} `;
  const options = field.unpacked === true ? ' [packed = false]' : '';
  return `${label}${type} ${field.name} = ${field.id}${options};`;
}
