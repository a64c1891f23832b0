/**
 * The typed arrays the JSON dialect carries by name (`{ "$t": "Float64Array", … }`): one table for the
 * `json` serializer and for the CLI's and dashboard's JSON views (tools/json-view.ts), so both read and
 * write the same names.
 */
export const TYPED_ARRAYS = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;

export type TypedArrayName = keyof typeof TYPED_ARRAYS;
