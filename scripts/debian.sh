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
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$0: install Debian's ${missing[*]} (sudo apt-get install ${missing[*]}), then run this again" >&2
    exit 1
  fi
}
