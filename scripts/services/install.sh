#!/usr/bin/env bash
# Installs the registry servers the tests use (etcd, ZooKeeper, Redis and Redis Sentinel) and the
# headless Chromium of the dashboard tests from Debian packages, only when missing, and makes sure none
# of the servers stays running as a system service: the test setup starts its own instances on free
# ports in temporary directories (test/setup/servers.ts).
#
# Idempotent and quick when everything is already installed. Needs root (or sudo) for apt-get.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || missing+=(etcd-server)
dpkg-query -W -f='${Status}' zookeeper 2>/dev/null | grep -q 'install ok installed' || missing+=(zookeeper)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# Sentinel for the replicated-Redis tests (test/multihost/, test/setup/clusters.ts)
command -v redis-sentinel >/dev/null 2>&1 || [ -x /usr/bin/redis-sentinel ] || missing+=(redis-sentinel)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
# The gRPC family's interop peers nobody here wrote (test/grpc): Python's C-core grpcio and its code
# generator (Debian's, under /usr/bin/python3: a python3 earlier on PATH may be another), protoc, and h2load for the gRPC bench; the JDK and Caucho's Hessian for hessian2 round trips.
/usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || missing+=(python3-grpcio)
/usr/bin/python3 -c 'import grpc_tools' >/dev/null 2>&1 || missing+=(python3-grpc-tools)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
[ -e /usr/share/java/hessian.jar ] || missing+=(libhessian-java)
# `ip` for the multi-host tests' network namespaces (test/multihost/support/netns.ts)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing+=(iproute2)
# Headless Chromium for the dashboard's browser tests (test/dashboard, driven through playwright-core).
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  # Keep the packages' post-install scripts from starting services where policy-rc.d is honoured.
  policy_created=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    policy_created=1
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ -n "$policy_created" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
else
  echo "etcd, zookeeper, redis, redis-sentinel, chromium and the interop peers are already installed"
fi

# Stop and disable whatever the packages may have started; we run our own instances.
for svc in etcd redis-server redis redis-sentinel zookeeper; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
    $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
  # No `service stop` here: Debian's etcd init script stops by executable without a pidfile, which would
  # also kill the test instances of a suite already running on this machine. A running system daemon is
  # stopped below, by its user.
  if [ -x "/etc/init.d/$svc" ] && command -v update-rc.d >/dev/null 2>&1; then
    $SUDO update-rc.d "$svc" disable >/dev/null 2>&1 || true
  fi
done

# A daemon started by a package outside any service manager: stop it only when it runs as the package's
# system user on the default port (never our own test instances, which run as the invoking user).
kill_system_daemon() {
  local user="$1" pattern="$2"
  local pids
  pids=$(pgrep -u "$user" -f "$pattern" 2>/dev/null || true)
  if [ -n "$pids" ]; then
    echo "stopping system $pattern (pids $pids)"
    # shellcheck disable=SC2086
    $SUDO kill $pids 2>/dev/null || true
  fi
}
id -u redis >/dev/null 2>&1 && kill_system_daemon redis 'redis-server'
id -u redis >/dev/null 2>&1 && kill_system_daemon redis 'redis-sentinel'
id -u etcd >/dev/null 2>&1 && kill_system_daemon etcd '/usr/bin/etcd'
id -u zookeeper >/dev/null 2>&1 && kill_system_daemon zookeeper 'org.apache.zookeeper.server'

echo "etcd:      $(etcd --version 2>/dev/null | sed -n 1p)"
echo "redis:     $(redis-server --version 2>/dev/null | sed -n 1p)"
echo "sentinel:  $(command -v redis-sentinel || echo missing)"
zk_jar=""; for j in /usr/share/java/zookeeper.jar /usr/share/zookeeper/zookeeper.jar; do [ -f "$j" ] && zk_jar="$j" && break; done
echo "zookeeper: ${zk_jar:-missing}"
echo "chromium:  $(chromium --version 2>/dev/null || echo missing)"
