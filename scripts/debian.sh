# Sourced by the set-up scripts: Debian packages, installed when missing.

# debian_packages COMMAND=PACKAGE...: installs each PACKAGE whose COMMAND is not in /usr/bin (a
# package without a command, `=PACKAGE`, when dpkg does not have it), with apt when running as
# root; otherwise says what to install and stops.
debian_packages() {
  local missing=() pair
  for pair in "$@"; do
    if [ -z "${pair%%=*}" ]; then
      dpkg -s "${pair#*=}" >/dev/null 2>&1 || missing+=("${pair#*=}")
    else
      [ -x "/usr/bin/${pair%%=*}" ] || missing+=("${pair#*=}")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && without_services apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$0: install Debian's ${missing[*]} (sudo apt-get install ${missing[*]}), then run this again" >&2
    exit 1
  fi
}

# without_services COMMAND...: runs COMMAND (as root) with a policy-rc.d that forbids every service
# action, then puts back what was there. A package with a service (mariadb-server, postgresql)
# starts it on install otherwise, through invoke-rc.d or, on systemd, deb-systemd-invoke, which
# both ask policy-rc.d first; the tests start their own servers, so none is left running.
without_services() {
  local policy=/usr/sbin/policy-rc.d
  (
    if [ -e "$policy" ]; then mv "$policy" "$policy.saved"; fi
    trap 'rm -f "$policy"; if [ -e "$policy.saved" ]; then mv "$policy.saved" "$policy"; fi' EXIT
    printf '#!/bin/sh\n# scripts/debian.sh: no service starts while it installs packages\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    "$@"
  )
}
