/**
 * Kubernetes service links: for every Service in its namespace, Kubernetes puts variables into every
 * pod's environment, named after the Service (upper case, `-` as `_`). A Service named `callisto` gives
 *
 *   CALLISTO_SERVICE_HOST=10.96.0.10            CALLISTO_PORT=tcp://10.96.0.10:20880
 *   CALLISTO_SERVICE_PORT=20880                 CALLISTO_PORT_20880_TCP=tcp://10.96.0.10:20880
 *   CALLISTO_SERVICE_PORT_<NAME>=20880          CALLISTO_PORT_20880_TCP_PROTO=tcp
 *                                               CALLISTO_PORT_20880_TCP_PORT=20880
 *                                               CALLISTO_PORT_20880_TCP_ADDR=10.96.0.10
 *
 * and one named `callisto-admin` gives `CALLISTO_ADMIN_PORT=tcp://10.96.0.12:9464`, the name of a real
 * key. A variable is a service link when both its name and its value have that shape; nobody writes
 * `tcp://…` for a port by hand, so a real key whose value is one is a service link too.
 */
import net from 'node:net';

const PROTOCOL = '(TCP|UDP|SCTP)';
const LINK_URL = /^(tcp|udp|sctp):\/\/(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+):\d{1,5}$/;
const PORT_NUMBER = /^\d{1,5}$/;

const isAddress = (value: string): boolean => net.isIP(value) !== 0;

/** The name shapes, each with the value shape that goes with it. */
const SHAPES: ReadonlyArray<readonly [RegExp, (value: string, match: RegExpExecArray) => boolean]> = [
  [/^(.+)_SERVICE_HOST$/, isAddress],
  [/^(.+)_SERVICE_PORT(_[A-Z0-9_]+)?$/, (value) => PORT_NUMBER.test(value)],
  [/^(.+)_PORT$/, (value) => LINK_URL.test(value)],
  [new RegExp(`^(.+)_PORT_(\\d{1,5})_${PROTOCOL}$`), (value) => LINK_URL.test(value)],
  [new RegExp(`^(.+)_PORT_(\\d{1,5})_${PROTOCOL}_PROTO$`), (value, m) => value.toUpperCase() === m[3]],
  [new RegExp(`^(.+)_PORT_(\\d{1,5})_${PROTOCOL}_PORT$`), (value, m) => value === m[2]],
  [new RegExp(`^(.+)_PORT_(\\d{1,5})_${PROTOCOL}_ADDR$`), isAddress],
];

/**
 * The Kubernetes Service a variable is a service link of (`callisto-admin` for
 * `CALLISTO_ADMIN_PORT=tcp://10.96.0.12:9464`), or undefined when the variable is not one.
 */
export function serviceLinkOf(name: string, value: string): string | undefined {
  const text = value.trim();
  for (const [pattern, valueFits] of SHAPES) {
    const match = pattern.exec(name);
    if (match && valueFits(text, match)) return match[1]!.toLowerCase().replace(/_/g, '-');
  }
  return undefined;
}

/** What to do about service links, said once in each line about them. */
export const SERVICE_LINKS_FIX =
  'Kubernetes sets these for every Service whose name starts with "callisto"; set enableServiceLinks: false in the pod spec to stop them';
