/** A service's identity: name + version (+ group). */
export interface ServiceKey {
  readonly name: string;
  readonly version: string;
  readonly group: string;
}

/** The canonical string form used in maps and registry paths: `name:version` or `group/name:version`. */
export function serviceKeyString(key: ServiceKey): string {
  return key.group ? `${key.group}/${key.name}:${key.version}` : `${key.name}:${key.version}`;
}
