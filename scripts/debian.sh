# Sourced by the set-up scripts: Debian packages, installed when missing.

# debian_packages COMMAND=PACKAGE...: installs each PACKAGE whose COMMAND is not in /usr/bin, with
# apt when running as root; otherwise says what to install and stops.
debian_packages() {
  local missing=() pair
  for pair in "$@"; do
    [ -x "/usr/bin/${pair%%=*}" ] || missing+=("${pair#*=}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$0: install Debian's ${missing[*]} (sudo apt-get install ${missing[*]}), then run this again" >&2
    exit 1
  fi
}
