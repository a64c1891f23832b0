/**
 * Finds the exported service an HTTP request names. A request may leave the version out: then the one
 * service of that name (and group) is meant, and naming none when there are several is refused, naming
 * the versions. The lookup of services by name is rebuilt only when the service table changes.
 */
import { serviceKeyString } from '../../core/service-key.js';
import { type HttpCallTarget, HttpRefusal, VERSION_HEADER } from '../../http/http-request.js';
import type { ExportedService, ServiceTable } from '../service-table.js';

export interface ServiceLookup {
  find(target: HttpCallTarget): ExportedService;
}

export function createServiceLookup(table: ServiceTable): ServiceLookup {
  let byName = new Map<string, ExportedService[]>();
  let builtAt = -1;
  const versionsOf = (group: string, name: string): ExportedService[] => {
    if (builtAt !== table.version) {
      byName = new Map();
      for (const exported of table.list()) {
        if (!exported.servedOn.http) continue;
        const { group: g, name: n } = exported.definition;
        const key = `${g}/${n}`;
        const list = byName.get(key);
        if (list === undefined) byName.set(key, [exported]);
        else list.push(exported);
      }
      builtAt = table.version;
    }
    return byName.get(`${group}/${name}`) ?? [];
  };
  return {
    find(target) {
      const { service, version, group } = target;
      if (version !== undefined) {
        const exported = table.lookup(service, version, group);
        if (exported?.servedOn.http) return exported;
        throw new HttpRefusal(
          404,
          'ServiceNotFound',
          `service ${serviceKeyString({ name: service, version, group })} is not provided here`,
        );
      }
      const versions = versionsOf(group, service);
      if (versions.length === 1) return versions[0]!;
      if (versions.length === 0) {
        const where = group ? ` in group "${group}"` : '';
        throw new HttpRefusal(404, 'ServiceNotFound', `service ${service}${where} is not provided here`);
      }
      throw new HttpRefusal(
        400,
        'BadRequest',
        `${service} is provided in versions ${versions.map((e) => e.definition.version).join(', ')}: name one with ${VERSION_HEADER}`,
      );
    },
  };
}
