/**
 * A pre-scan of protobuf wire bytes against their message type: walks the tags without building
 * anything and returns how many values (elements) decoding would create, or throws a DecodeLimitError
 * before protobufjs allocates a thing.
 *
 * A protobuf body can decode into far more values than it has bytes: an empty sub-message is two bytes
 * on the wire (tag, length 0) but becomes an object holding a default for every field of its type. So a
 * message counts 1 + the number of its type's fields, whether present or not; every field occurrence
 * counts 1 more (a repeated element, a string, a replaced default); a packed run of scalars counts its
 * length in bytes (each scalar takes at least one); a map entry counts 2 (its key and value). Nesting is
 * bounded by protobufjs' own limit ({@link MAX_PROTOBUF_DEPTH}). Linear in the bytes, allocation-free
 * per element (the stack of open messages is preallocated; per-type field tables are built once).
 */
import { DecodeLimitError, tooManyElements } from './decode-limits.js';

/** protobufjs' recursion limit (and protoc's): messages nested deeper are refused. */
export const MAX_PROTOBUF_DEPTH = 100;

/** The reflection a scan reads of a protobufjs field (structural: no import of protobufjs). */
export interface ScannedField {
  readonly id: number;
  readonly type: string;
  readonly repeated?: boolean;
  readonly map?: boolean;
  readonly resolvedType?: unknown;
  resolve?(): unknown;
}

/** The reflection a scan reads of a protobufjs message type. */
export interface ScannedType {
  readonly fieldsArray: ReadonlyArray<ScannedField>;
}

/** How a field's occurrences are read: a sub-message, a map entry, a packable scalar, or a leaf. */
interface FieldPlan {
  /** Sub-message type (fields of a message type, groups, map values of a message type). */
  readonly message: TypePlan | undefined;
  /** A map field: its entries are read as a message of key (1) and value (2). */
  readonly entry: TypePlan | undefined;
  /** A repeated numeric field whose length-delimited form is a packed run. */
  readonly packable: boolean;
}

interface TypePlan {
  /** 1 + the number of fields: what an empty message of the type decodes into. */
  readonly weight: number;
  readonly fields: Map<number, FieldPlan>;
}

const LENGTH_DELIMITED_SCALARS = new Set(['string', 'bytes']);
const plans = new WeakMap<object, TypePlan>();

function isMessageType(value: unknown): value is ScannedType {
  return typeof value === 'object' && value !== null && Array.isArray((value as ScannedType).fieldsArray);
}

/** The scan plan of `type`, built once per type (recursive types share their plan). */
function planOf(type: ScannedType): TypePlan {
  const known = plans.get(type);
  if (known !== undefined) return known;
  const fields = new Map<number, FieldPlan>();
  const plan: TypePlan = { weight: 1 + type.fieldsArray.length, fields };
  plans.set(type, plan);
  for (const field of type.fieldsArray) {
    field.resolve?.();
    const resolved = isMessageType(field.resolvedType) ? field.resolvedType : undefined;
    if (field.map === true) {
      const value: FieldPlan = {
        message: resolved === undefined ? undefined : planOf(resolved),
        entry: undefined,
        packable: false,
      };
      const entry: TypePlan = { weight: 2, fields: new Map([[2, value]]) };
      fields.set(field.id, { message: undefined, entry, packable: false });
    } else {
      fields.set(field.id, {
        message: resolved === undefined ? undefined : planOf(resolved),
        entry: undefined,
        packable:
          field.repeated === true && resolved === undefined && !LENGTH_DELIMITED_SCALARS.has(field.type),
      });
    }
  }
  return plan;
}

/** Scans protobuf bytes of one message type. */
export interface ProtobufScanner {
  /** Elements `bytes` decodes into; throws DecodeLimitError when over a limit or malformed. */
  scan(bytes: Uint8Array, maxElements: number): number;
}

export function createProtobufScanner(type: ScannedType): ProtobufScanner {
  const root = planOf(type);
  // the enclosing messages of the one being read: their plans, where they end, and for a group (ended
  // by its end tag, within its parent) its field id (0: a length-delimited message)
  const openPlans: Array<TypePlan | undefined> = new Array(MAX_PROTOBUF_DEPTH + 2);
  const ends = new Float64Array(MAX_PROTOBUF_DEPTH + 2);
  const groups = new Int32Array(MAX_PROTOBUF_DEPTH + 2);
  return {
    scan(bytes, maxElements) {
      const length = bytes.length;
      let pos = 0;
      const malformed = (what: string): DecodeLimitError =>
        new DecodeLimitError(`malformed protobuf: ${what} at byte ${pos}`);
      const varint = (): number => {
        let value = 0;
        let scale = 1;
        for (let i = 0; i < 10; i++) {
          if (pos >= length) throw malformed('a varint runs past the end');
          const byte = bytes[pos++]!;
          value += (byte & 0x7f) * scale;
          if (byte < 0x80) return value;
          scale *= 128;
        }
        throw malformed('a varint longer than 10 bytes');
      };
      let elements = root.weight;
      let depth = 0;
      let plan: TypePlan | undefined = root;
      let end = length;
      let group = 0;
      const open = (next: TypePlan | undefined, nextEnd: number, nextGroup: number): void => {
        if (depth >= MAX_PROTOBUF_DEPTH) {
          throw new DecodeLimitError(
            `a body nests messages deeper than ${MAX_PROTOBUF_DEPTH} levels (maximum nesting depth)`,
          );
        }
        openPlans[depth] = plan;
        ends[depth] = end;
        groups[depth] = group;
        depth++;
        plan = next;
        end = nextEnd;
        group = nextGroup;
        if (next !== undefined) elements += next.weight;
      };
      const close = (): void => {
        depth--;
        plan = openPlans[depth];
        end = ends[depth]!;
        group = groups[depth]!;
      };
      for (;;) {
        if (pos >= end) {
          if (pos > end) throw malformed('a field runs past the end of its message');
          if (depth === 0) break;
          if (group !== 0) throw malformed('a group without its end tag');
          close();
          continue;
        }
        const tag = varint();
        const id = Math.floor(tag / 8);
        const wireType = tag % 8;
        if (wireType === 4) {
          if (group === 0 || group !== id) throw malformed('an unmatched end-group tag');
          close();
          continue;
        }
        const field = plan?.fields.get(id);
        if (++elements > maxElements) throw tooManyElements(length, maxElements);
        switch (wireType) {
          case 0:
            varint();
            break;
          case 1:
            pos += 8;
            break;
          case 5:
            pos += 4;
            break;
          case 2: {
            const size = varint();
            const stop = pos + size;
            if (stop > end) throw malformed('a length runs past the end');
            if (field?.entry !== undefined) open(field.entry, stop, 0);
            else if (field?.message !== undefined) open(field.message, stop, 0);
            else {
              if (field?.packable === true) elements += size;
              pos = stop;
            }
            break;
          }
          case 3:
            open(field?.message, end, id);
            break;
          default:
            throw malformed(`wire type ${wireType}`);
        }
        if (elements > maxElements) throw tooManyElements(length, maxElements);
      }
      return elements;
    },
  };
}
