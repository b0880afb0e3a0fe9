#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/browser): Playwright drives /usr/bin/chromium through
# executable_path, so no `playwright install` (and no download outside the package registries) is needed.
#
#   scripts/chromium.sh install   # apt-get install -y chromium, as root (idempotent)
#   scripts/chromium.sh path      # print the browser's path
set -euo pipefail

CHROMIUM=${MINDBANK_TEST_CHROMIUM:-/usr/bin/chromium}

log() { echo "chromium.sh: $*" >&2; }

case "${1:-}" in
    install)
        if [ -x "$CHROMIUM" ]; then
            log "Chromium already installed ($CHROMIUM)"
            exit 0
        fi
        if [ "$(id -u)" != 0 ]; then
            log "installing Chromium needs root: run 'apt-get install -y chromium' as root (the browser tests skip meanwhile)"
            exit 0
        fi
        log "installing Chromium with apt"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
        ;;
    path)
        echo "$CHROMIUM"
        ;;
    *)
        echo "usage: $0 install|path" >&2
        exit 2
        ;;
esac
