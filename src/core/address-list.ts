/**
 * Registry addresses written as one string: `etcd://h1:2379,h2:2379,zookeeper://h3:2181` is two
 * addresses, the first with two hosts. A comma starts a new address only where a `kind://` follows it.
 */
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;

export function splitAddressList(text: string): string[] {
  const addresses: string[] = [];
  for (const part of text.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const last = addresses.length - 1;
    if (last >= 0 && !SCHEME.test(entry)) addresses[last] = `${addresses[last]},${entry}`;
    else addresses.push(entry);
  }
  return addresses;
}
